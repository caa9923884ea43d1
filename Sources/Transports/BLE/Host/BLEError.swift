import BLEProtocol
import HAL

/// Everything that can go wrong in the host stack, worded for the person at the bench.
public enum BLEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The controller never answered a command within its deadline.
    case commandTimedOut(String)
    /// The controller answered a command with a failure status.
    case commandFailed(String, status: UInt8)
    /// The link to the controller (socket, serial port, user channel) failed or closed.
    case transport(String)
    /// The controller sent bytes that are not HCI.
    case protocolError(String)
    /// The device (the peer, not the controller) answered in a way ATT or GATT does not allow:
    /// an overlapping discovery answer, a response that fits no request, a PDU over the MTU.
    case attProtocolError(String)
    /// The peer did not accept our connection before the deadline; we cancelled the attempt.
    case connectionTimedOut(BLEAddress)
    /// The controller refused or failed the connection, with its HCI status.
    case connectionFailed(BLEAddress, status: UInt8)
    /// The link went down while a request was waiting on it.
    case disconnected(DisconnectReason)
    /// The peer answered an ATT request with an error.
    case att(ATTFailure)
    /// The peer did not answer an ATT request within the 30 s transaction timeout.
    case attTimedOut(String)
    /// The peer has no such service, characteristic or descriptor; the text names it.
    case notFound(String)
    /// The caller asked for something the host cannot do now, e.g. a second concurrent connect.
    case invalid(String)
    /// Opening the controller (Reset and the questions after it) took longer than its overall
    /// deadline; `noCredits` when the controller had stopped granting command credits.
    case controllerStartTimedOut(Duration, waitingFor: String, noCredits: Bool)
    /// The controller was used before the host set it up.
    case notInitialized
    /// The caller's task was cancelled while it waited; what it started was cleaned up.
    case cancelled
    /// Something with an overall deadline (discovering a whole database) took longer.
    case deadlineExceeded(String, Duration)
    /// The `--btsnoop` capture could not be created (a full disk, no permission): an I/O
    /// failure of the machine, not a mistake in the command line.
    case capture(BTSnoopError)
    /// The controller could not be reached at all (no kernel support, no permission, busy, nothing listening).
    case link(HCILinkError)
    /// Securing the link failed: the pairing's reason (nothing was stored).
    case pairingFailed(PairingFailure)
    /// The device refused to encrypt with the key its bond gave (an HCI status, 0x06 PIN or Key
    /// Missing when it has forgotten the bond): the stale bond must be removed and the device paired again.
    case bondRejected(BLEAddress, status: UInt8)

    /// The words a person reads in messages and logs, worded for the person at the bench.
    public var description: String {
        switch self {
        case .commandTimedOut(let name): "the Bluetooth controller did not answer \(name) in time"
        case .commandFailed(let name, let status): "the Bluetooth controller refused \(name): \(HCIStatus.describe(status)) (0x\(Hex.byte(status)))"
        case .transport(let why): "lost the Bluetooth controller: \(why)"
        case .protocolError(let why): "the Bluetooth controller sent something that is not HCI: \(why)"
        case .attProtocolError(let why): "the device answered in a way ATT does not allow: \(why)"
        case .connectionTimedOut(let address): "\(address) did not accept the connection in time: is it advertising and in range?"
        case .connectionFailed(let address, let status): "could not connect to \(address): \(HCIStatus.describe(status)) (0x\(Hex.byte(status)))"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .att(let failure): failure.description
        case .attTimedOut(let request): "the device did not answer \(request) within the ATT transaction timeout"
        case .notFound(let what): "\(what) not found"
        case .invalid(let why): why
        case .controllerStartTimedOut(let limit, let waiting, let noCredits):
            "the Bluetooth controller did not finish starting within \(limit.components.seconds) s (still waiting for \(waiting)"
                + (noCredits ? "; it has stopped granting command credits" : "") + "): is it a working controller, and is nothing else using it?"
        case .notInitialized: "the Bluetooth controller has not been initialised"
        case .cancelled: "cancelled"
        case .deadlineExceeded(let what, let deadline): "\(what) took longer than \(deadline.components.seconds) s: the device answers too slowly or without end"
        case .link(let error): error.description
        case .capture(let error): error.description
        case .pairingFailed(let failure): failure.description
        case .bondRejected(let address, let status):
            "\(address) refused the key of its bond (\(HCIStatus.describe(status)), 0x\(Hex.byte(status))): it has forgotten the pairing; "
                + "forget it here too with `hwprobe bonds --hci URI --remove \(address)` and pair again"
        }
    }
}

/// An ATT Error Response, with the request it answered.
public struct ATTFailure: Hashable, Sendable, CustomStringConvertible {
    /// The ATT error code; `ATTErrorCode.describe` names it.
    public var code: UInt8
    /// The handle the error concerns; 0 when the request named none or the server gave none.
    public var handle: UInt16
    /// The opcode of the request that failed, so a caller can tell which step of a procedure it was.
    public var requestOpcode: UInt8

    /// Builds a failure from the three fields of an Error Response.
    public init(code: UInt8, handle: UInt16, requestOpcode: UInt8) {
        self.code = code
        self.handle = handle
        self.requestOpcode = requestOpcode
    }

    /// The words a person reads in messages and logs.
    public var description: String {
        "the device answered with ATT error 0x\(Hex.byte(code)) (\(ATTErrorCode.describe(code))) for handle 0x\(Hex.word(handle))"
    }
}
