import HAL
import Transports

/// Turns a `--hci` URI into a scale transport: the simulated bench, or one of the real HCI
/// transports once the host stack drives them.
struct TransportFactory: Sendable {
    var bench: SimulatedBench

    func clock(for uri: DeviceURI) -> any Clock<Duration> {
        if case .sim = uri { return bench.clock }
        return ContinuousClock()
    }

    func scaleTransport(for uri: DeviceURI) throws(CLIFailure) -> any ScaleTransport {
        switch uri {
        case .sim:
            return bench.transport
        case .hci(let index):
            // Ask the kernel first: its answer (no Bluetooth, no permission, no such controller)
            // is what a person needs to hear before anything else.
            let controllers: [HCIControllerInfo]
            do { controllers = try HCIControllerProbe.controllers() } catch { throw CLIFailure(error) }
            guard controllers.contains(where: { $0.index == index }) else {
                throw CLIFailure(HCIAccessError.noSuchController(index))
            }
            throw CLIFailure(kind: .unsupported, message: "the BLE host stack is not part of this build yet, so hci:\(index) cannot be scanned")
        case .tcp, .uart:
            throw CLIFailure(kind: .unsupported, message: "the BLE host stack is not part of this build yet, so \(uri) cannot be scanned")
        default:
            throw CLIFailure(kind: .usage, message: "\(uri) is not an HCI controller (use hci:N, uart:…, tcp:HOST:PORT or sim:)")
        }
    }
}

extension CLIFailure {
    init(_ error: HCIAccessError) {
        switch error {
        case .noKernelSupport: self.init(kind: .noKernelSupport, message: error.description)
        case .notPermitted: self.init(kind: .permission, message: error.description)
        case .busy: self.init(kind: .busy, message: error.description)
        case .noSuchController, .system: self.init(kind: .device, message: error.description)
        }
    }
}
