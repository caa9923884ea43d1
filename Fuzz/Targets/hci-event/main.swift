import BLEProtocol
import FuzzSupport
import Transports

/// An HCI event as the controller sends it (code, then parameters; the length byte is implied),
/// decoded as the host decodes it, then everything inside it that the host reads further:
/// advertising data of each report, and the return parameters of the commands it sends at start-up.
runFuzzer { bytes in
    guard let code = bytes.first else { return }
    let packet = HCIEventPacket(code: code, parameters: Array(bytes.dropFirst().prefix(255)))
    guard let event = try? HCIEvent(parsing: packet) else { return }
    switch event {
    case .commandComplete(_, _, let returnParameters):
        _ = ReturnParameters.status(returnParameters)
        _ = try? ReturnParameters.bdAddress(returnParameters)
        _ = try? ReturnParameters.features(returnParameters)
        _ = try? LocalVersion(returnParameters: returnParameters)
        _ = try? ACLBufferSize.fromReadBufferSize(returnParameters)
        _ = try? ACLBufferSize.fromLEReadBufferSize(returnParameters)
    case .leAdvertisingReports(let reports):
        for report in reports { _ = try? report.advertisement() }
    default:
        break
    }
}
