import BLEProtocol
import Transports

/// The L2CAP fixed channels of a GATT peripheral that neither pairs nor asks for anything (Core
/// Vol 3 Part A §4, Part H §3.5): ATT frames go to the peripheral's server, everything else on
/// the LE signalling and security channels gets the answer such a device gives.
enum PeripheralChannels {
    enum Routed: Equatable {
        case att([UInt8])
        case reply(L2CAPFrame)
        /// The central answered a Connection Parameter Update Request (result 0 accepted).
        case parameterUpdateAnswered(identifier: UInt8, accepted: Bool)
        case nothing
    }

    static func route(_ frame: L2CAPFrame) -> Routed {
        switch frame.channel {
        case L2CAPFrame.att:
            return .att(frame.payload)
        case L2CAPFrame.leSignaling:
            return signaling(frame.payload)
        case L2CAPFrame.securityManager:
            // Pairing Request (0x01) → Pairing Failed (0x05), reason Pairing Not Supported (0x05).
            return frame.payload.first == 0x01 ? .reply(L2CAPFrame(channel: L2CAPFrame.securityManager, payload: [0x05, 0x05])) : .nothing
        default:
            // No dynamic channels here: an unknown fixed channel's frames are dropped, as the specification says.
            return .nothing
        }
    }

    private static func signaling(_ payload: [UInt8]) -> Routed {
        guard let packet = try? LESignalingPacket(parsing: payload) else {
            let identifier = payload.count > 1 ? payload[1] : 0
            return reject(identifier)
        }
        switch packet {
        case .connectionParameterUpdateResponse(let identifier, let result):
            return .parameterUpdateAnswered(identifier: identifier, accepted: result == 0)
        case .commandReject:
            return .nothing
        case .connectionParameterUpdateRequest(let identifier, _, _, _, _), .other(_, let identifier, _):
            // Only a peripheral asks for new parameters; a central's request is not understood here.
            return reject(identifier)
        }
    }

    /// Command Reject, reason 0x0000 Command not understood.
    private static func reject(_ identifier: UInt8) -> Routed {
        .reply(L2CAPFrame(channel: L2CAPFrame.leSignaling,
                          payload: LESignalingPacket.commandReject(identifier: identifier, reason: 0, data: []).encoded))
    }

    static func att(_ pdu: [UInt8]) -> PeripheralAction {
        .send(L2CAPFrame(channel: L2CAPFrame.att, payload: pdu))
    }
}
