/// Typed failures of scale and mirror links; each message says what a person can do about it.
public enum ScaleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the mirror refused a command: one of its profile's reasons, or another ATT error by
    /// its code. Which ATT application error means which reason is the mirror profile's to say
    /// (the MirrorV1 plugin maps them), not HAL's.
    public enum Refusal: Hashable, Sendable {
        /// The scale is not aligned yet.
        case notAligned
        /// The mirror has not been initialised.
        case notInitialized
        /// The mirror is not ready for the command.
        case notReady
        /// Any other ATT error, by its code.
        case attError(UInt8)
    }

    /// The device or one of its services was not there; the text names what was looked for.
    case notFound(String)
    /// The link could not be made or the controller failed while making it; the text says why.
    case connectionFailed(String)
    /// The link went down; every later command on the connection fails the same way.
    case disconnected(DisconnectReason)
    /// The device answered a command with an error; the refusal says which and, when known, why.
    case refused(MirrorCommand, Refusal)
    /// A request or command got no answer in time; the text names what we waited for.
    case timedOut(String)
    /// The device lacks what was asked, e.g. `deviceInfo` on a plain scale or a missing characteristic.
    case unsupported(String)
    /// The device sent something its profile forbids, or an error where none was expected.
    case protocolViolation(String)
    /// A vendor scale's opening exchange (unit, user, time, start command) was refused or never
    /// answered: without it such scales send no readings.
    case handshakeFailed(String)
    /// The device wanted an encrypted link and pairing with it failed (or it refused its bond's
    /// key); the text is the pairing's reason and what to do. Nothing was stored.
    case notSecured(String)

    /// The words a person reads in messages and reports, including what to try next.
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
        case .notSecured(let why): why
        }
    }
}
