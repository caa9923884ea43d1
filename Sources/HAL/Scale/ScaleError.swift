/// Typed failures of scale and mirror links; each message says what a person can do about it.
public enum ScaleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The mirror refused a write with one of its profile errors (ATT 0x80–0x82) or another ATT error.
    public enum Refusal: Hashable, Sendable {
        case notAligned          // 0x80
        case notInitialized      // 0x81
        case notReady            // 0x82
        case attError(UInt8)

        public init(attCode: UInt8) {
            switch attCode {
            case 0x80: self = .notAligned
            case 0x81: self = .notInitialized
            case 0x82: self = .notReady
            default: self = .attError(attCode)
            }
        }
    }

    case notFound(String)
    case connectionFailed(String)
    case disconnected(DisconnectReason)
    case refused(MirrorCommand, Refusal)
    case timedOut(String)
    case unsupported(String)
    case protocolViolation(String)
    /// A vendor scale's opening exchange (unit, user, time, start command) was refused or never
    /// answered: without it such scales send no readings.
    case handshakeFailed(String)

    public var description: String {
        switch self {
        case .notFound(let what): "\(what) not found: check it is powered on and in range"
        case .connectionFailed(let why): "could not connect: \(why)"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .refused(let command, let refusal):
            switch refusal {
            case .notAligned: "the mirror refused \(command.name): the scale is not aligned yet"
            case .notInitialized: "the mirror refused \(command.name): init must be written before the scan token"
            case .notReady: "the mirror refused \(command.name): it is not ready to scan"
            case .attError(let code):
                "the device refused \(command.name) (ATT error 0x\(Hex.byte(code)))"
            }
        case .timedOut(let what): "timed out waiting for \(what)"
        case .unsupported(let what): "not supported by this device: \(what)"
        case .protocolViolation(let what): "the device broke its protocol: \(what)"
        case .handshakeFailed(let what): "the scale did not complete its opening exchange: \(what)"
        }
    }
}
