import CLinuxShims
import Glibc

/// The kernel's hotplug announcements (`NETLINK_KOBJECT_UEVENT`, group 1): what `hwprobe watch`
/// listens to instead of polling. Any user may listen (the kernel sets NL_CFG_F_NONROOT_RECV for
/// this family); a kernel or sandbox without it says so as an `Errno` on `open`.
package final class UEventSocket: Sendable {
    private let descriptor: FileDescriptor

    package init(groups: UInt32 = 1) throws(Errno) {
        descriptor = FileDescriptor(rawValue: try check(hal_uevent_socket(groups)))
    }

    deinit { descriptor.close() }

    /// The next event, waiting at most `timeoutMilliseconds`; nil when none came in time.
    /// Messages that are not events (or are longer than `UEvent.maximumSize`) are skipped.
    package func next(timeoutMilliseconds: Int32) throws(Errno) -> UEvent? {
        var buffer = [UInt8](repeating: 0, count: UEvent.maximumSize + 1)
        while true {
            var sender: UInt32 = 0
            let count = buffer.withUnsafeMutableBytes { raw in hal_uevent_receive(descriptor.rawValue, raw.baseAddress, raw.count, &sender) }
            if count >= 0 {
                guard count <= UEvent.maximumSize, let event = UEvent.parse(Array(buffer[0..<count])) else { continue }
                return event
            }
            guard Int32(-count) == EAGAIN else { throw Errno(Int32(-count)) }
            let ready = try descriptor.poll(for: .readable, timeoutMilliseconds: timeoutMilliseconds)
            if ready.isEmpty { return nil }
        }
    }
}
