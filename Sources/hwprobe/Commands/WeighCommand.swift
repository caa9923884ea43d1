import HAL
import Transports

/// `hwprobe weigh`: one stable weight from a scale, connected or broadcasting. Stable means the
/// device's own stable flag where it has one, otherwise two consecutive readings equal within the
/// resolution (0.005 kg).
struct WeighCommand: Sendable {
    var console: Console
    var registry: DriverRegistry
    var transports: TransportFactory

    struct Report: Encodable {
        var address: String
        var driver: String
        var weightKg: Double
        var stable: Bool
    }

    static let resolution = 0.005

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--hci")
        var wanted: BLEAddress?
        if let address = invocation.positionals.first {
            guard let parsed = BLEAddress(string: address) else {
                throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF")
            }
            wanted = parsed
        }
        var seconds = 30.0
        if let timeout = invocation.value("--timeout") {
            guard let value = Double(timeout), value > 0, value <= 3600 else {
                throw CLIFailure(kind: .usage, message: "--timeout must be a number of seconds more than 0 and at most 3600, e.g. 30")
            }
            seconds = value
        }
        let clock = transports.clock(for: uri)
        let (transport, close) = try await transports.scaleTransport(for: uri, snoopPath: invocation.value("--btsnoop"))
        let registry = registry
        let outcome = await Self.weigh(on: transport, wanted: wanted, registry: registry, clock: clock,
                                       deadline: .milliseconds(Int64(seconds * 1000)))
        await close()
        switch outcome {
        case .success(let report):
            console.out(invocation.wantsJSON ? JSON.encode(report)
                        : "\(formatKilograms(report.weightKg)) kg from \(report.address) (\(report.driver))\n")
            return 0
        case .failure(let failure):
            throw failure
        }
    }

    /// Finds the scale, connects, and waits for a stable reading, all within `deadline`.
    static func weigh(on transport: any ScaleTransport, wanted: BLEAddress?, registry: DriverRegistry,
                      clock: any Clock<Duration>, deadline: Duration) async -> Result<Report, CLIFailure> {
        await withTaskGroup(of: Result<Report, CLIFailure>.self) { group in
            group.addTask { await weighWithoutDeadline(on: transport, wanted: wanted, registry: registry) }
            group.addTask {
                try? await clock.sleep(for: deadline)
                return .failure(CLIFailure(kind: .timedOut, message: "no stable weight within \(deadline)"))
            }
            let first = await group.next() ?? .failure(CLIFailure(kind: .timedOut, message: "no stable weight"))
            group.cancelAll()
            return first
        }
    }

    private static func weighWithoutDeadline(on transport: any ScaleTransport, wanted: BLEAddress?,
                                             registry: DriverRegistry) async -> Result<Report, CLIFailure> {
        var chosen: (device: DiscoveredDevice, driver: String)?
        do {
            for try await device in transport.discover() {
                if let wanted, device.address.bytes != wanted.bytes { continue }
                guard let claim = registry.claim(.advertisement(device.advertisement)), claim.descriptor.kind == .scale else { continue }
                chosen = (device, claim.descriptor.id)
                break
            }
        } catch {
            return .failure(CLIFailure(kind: .device, message: "scanning failed: \(error)"))
        }
        guard let chosen else { return .failure(CLIFailure(kind: .device, message: "no scale found")) }
        let connection: any ScaleConnection
        do { connection = try await transport.connect(to: chosen.device) } catch {
            return .failure(CLIFailure(kind: .device, message: error.description))
        }
        var previous: Double?
        for await event in connection.events {
            switch event {
            case .weight(let reading):
                defer { previous = reading.kilograms }
                let stableByFlag = reading.stable == true
                let stableByRepeat = reading.stable == nil && previous.map { abs($0 - reading.kilograms) <= resolution + 1e-9 } == true
                guard stableByFlag || stableByRepeat, !reading.loadRemoved else { continue }
                await connection.disconnect()
                return .success(Report(address: chosen.device.address.description, driver: chosen.driver,
                                       weightKg: (reading.kilograms * 1000).rounded() / 1000, stable: true))
            case .disconnected(let reason):
                return .failure(CLIFailure(kind: .disconnected, message: "the scale disconnected before a stable reading: \(reason)"))
            default:
                continue
            }
        }
        return .failure(CLIFailure(kind: .disconnected, message: "the scale went away before a stable reading"))
    }
}
