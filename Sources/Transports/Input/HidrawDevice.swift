import HAL
import LinuxIO
import Synchronization

/// The bus a HID device hangs off: pads speak different output reports over USB and Bluetooth.
public enum HIDBus: Hashable, Sendable {
    /// Plugged in by USB cable.
    case usb
    /// Paired over Bluetooth, where pads expect other output reports.
    case bluetooth
    /// Any other bus, by the kernel's bus number.
    case other(UInt32)

    /// Sorts the bus number the kernel reports (HIDIOCGRAWINFO) into one of these.
    init(_ raw: UInt32) {
        self = raw == InputIdentity.busUSB ? .usb : raw == InputIdentity.busBluetooth ? .bluetooth : .other(raw)
    }
}

/// An open hidraw node: who is behind it (HIDIOCGRAWINFO, the report descriptor) and a way to
/// send it output reports. Writes run on the device's own thread, one at a time, because the
/// kernel may block a write until the USB stack has taken the report.
///
/// Opened with `open(2)` (see `FileDescriptor.open`), never `openat`, so umockdev can emulate it.
public final class HidrawDevice: Sendable {
    /// The hidraw node this device was opened at, for messages.
    public let path: String
    /// The vendor and product IDs the kernel reports, for matching a driver.
    public let identity: USBIdentity
    /// Which bus the device is on; pads take different output reports over USB and Bluetooth.
    public let bus: HIDBus
    /// The HID report descriptor, for telling which reports the device takes.
    public let reportDescriptor: [UInt8]

    private let descriptor: Mutex<FileDescriptor?>
    private let gone = Atomic<Bool>(false)
    private let queue: BlockingWork.Queue

    private init(path: String, fd: FileDescriptor, identity: USBIdentity, bus: HIDBus, reportDescriptor: [UInt8]) {
        self.path = path
        self.identity = identity
        self.bus = bus
        self.reportDescriptor = reportDescriptor
        descriptor = Mutex(fd)
        queue = BlockingWork.Queue(label: "hidraw \(path)")
    }

    deinit { close() }

    /// Opens a hidraw node read-write and reads its IDs and report descriptor; errors say what to do about it.
    public static func open(_ path: String) throws(HidrawError) -> HidrawDevice {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path, .readWrite, nonBlocking: true)
        } catch {
            throw openError(error, path: path)
        }
        do throws(Errno) {
            let id = try fd.hidrawIdentity()
            let reportDescriptor = try fd.hidrawReportDescriptor()
            return HidrawDevice(path: path, fd: fd, identity: USBIdentity(vendor: id.vendor, product: id.product),
                                bus: HIDBus(id.bus), reportDescriptor: reportDescriptor)
        } catch {
            fd.close()
            if error.meansDeviceGone { throw .disappeared(path) }
            if error == .notTTY || error == .invalid {
                throw .notHidraw("\(path) is not a hidraw node (\(error)): use hidraw:/dev/hidrawN from `hwprobe list`")
            }
            throw .io("\(path): \(error)")
        }
    }

    /// Writes one output report (report ID first). After the device has gone, every later call
    /// throws `.disappeared` at once.
    public func write(_ report: [UInt8]) async throws(HidrawError) {
        try await queue.run { [self] () -> Result<Void, HidrawError> in Result { () throws(HidrawError) in try writeNow(report) } }
    }

    /// Waits up to `timeout` for one input report and returns it (report ID first), or nil when
    /// none came in time.
    public func readInputReport(timeout: Duration, maxLength: Int = 64) async throws(HidrawError) -> [UInt8]? {
        try await queue.run { [self] () -> Result<[UInt8]?, HidrawError> in
            Result { () throws(HidrawError) -> [UInt8]? in try readNow(timeout: timeout, maxLength: maxLength) }
        }
    }

    /// Closes the node; later calls fail. Idempotent.
    public func close() {
        descriptor.withLock { fd in
            fd?.close()
            fd = nil
        }
    }

    private func writeNow(_ report: [UInt8]) throws(HidrawError) {
        if gone.load(ordering: .acquiring) { throw .disappeared(path) }
        try descriptor.withLock { fd throws(HidrawError) in
            guard let fd else { throw .io("\(path) is closed") }
            do throws(Errno) {
                // One write is one report: hidraw hands the buffer to the device as a whole.
                try fd.writeAll(report)
            } catch {
                throw failure(error)
            }
        }
    }

    private func readNow(timeout: Duration, maxLength: Int) throws(HidrawError) -> [UInt8]? {
        if gone.load(ordering: .acquiring) { throw .disappeared(path) }
        let fd = descriptor.withLock { $0 }
        guard let fd else { throw .io("\(path) is closed") }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let left = clock.now.duration(to: deadline)
            if left <= .zero { return nil }
            let milliseconds = left.pollMilliseconds(ceiling: 60_000)
            let events: FileDescriptor.PollEvents
            do throws(Errno) {
                events = try fd.poll(for: .readable, timeoutMilliseconds: milliseconds)
            } catch {
                throw failure(error)
            }
            if events.contains(.hangUp) || events.contains(.error) { throw failure(.noDevice) }
            guard events.contains(.readable) else { continue }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maxLength, alignment: 1)
            defer { buffer.deallocate() }
            let n: Int
            do throws(Errno) {
                n = try fd.read(into: buffer)
            } catch {
                if error == .wouldBlock { continue }
                throw failure(error)
            }
            if n == 0 { throw failure(.noDevice) }
            return Array(buffer.prefix(n).map { $0 })
        }
    }

    /// After an unplug hidraw answers ENODEV; the USB stack below it may say EIO first.
    private func failure(_ error: Errno) -> HidrawError {
        if error.meansDeviceGone || error == .ioError {
            gone.store(true, ordering: .releasing)
            return .disappeared(path)
        }
        if error.meansPermission { return .permissionDenied(path) }
        return .io("\(path): \(error)")
    }

    private static func openError(_ error: Errno, path: String) -> HidrawError {
        if error == .noEntry { return .notFound(path) }
        if error.meansPermission { return .permissionDenied(path) }
        if error.meansDeviceGone { return .disappeared(path) }
        return .io("cannot open \(path): \(error)")
    }
}
