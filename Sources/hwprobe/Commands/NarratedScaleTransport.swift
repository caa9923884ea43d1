import HAL
import Transports

/// The simulated bench has no host stack to report what happens, so under `-v` the CLI says
/// what it can see from outside a transport: each peripheral found (with the rule that claims it)
/// and each connection. There is no HCI link, so no handle, MTU, subscription or ATT line.
struct NarratedScaleTransport: ScaleTransport {
    let base: any ScaleTransport
    let log: HostEventLog

    func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        let upstream = base.discover()
        let log = log
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DiscoveredDevice.self)
        let task = Task {
            do {
                for try await device in upstream {
                    log.record(.peripheralSeen(device))
                    continuation.yield(device)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
        let connection = try await base.connect(to: device)
        log.note("connected to \(HostEventLog.address(device.address)) (simulated bench: no HCI link, so no handle or ATT events)")
        return connection
    }
}
