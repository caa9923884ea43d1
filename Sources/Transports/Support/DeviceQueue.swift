import Dispatch

/// One serial thread for a device's blocking calls (a libusb transfer waiting out its timeout, a
/// hidraw write the USB stack is slow to take), so they never sit on one of the few threads of
/// Swift's cooperative pool. Calls run one at a time in the order they were made.
final class DeviceQueue: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the device's thread and returns its result. The call itself is bounded by
    /// whatever timeout `body` passes to the kernel or libusb; a cancelled caller still waits for
    /// it, so a device is never closed under a transfer in flight.
    func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () -> Result<T, E>) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { done in
            queue.async { done.resume(returning: body()) }
        }
        return try result.get()
    }
}
