import HAL

/// HAL's reasons for a link ending, to and from the HCI reason codes of Disconnection Complete and
/// HCI_Disconnect (Core Specification Vol 1 Part F): wire codes are HCI's business, so they live
/// with the HCI codecs and HAL speaks only of what a person can act on.
extension DisconnectReason {
    /// Remote User Terminated Connection (0x13).
    public static let remoteUserTerminatedCode: UInt8 = 0x13
    /// Connection Timeout (0x08): a supervision timeout.
    public static let connectionTimeoutCode: UInt8 = 0x08
    /// Connection Terminated By Local Host (0x16).
    public static let localHostTerminatedCode: UInt8 = 0x16

    /// The reason a Disconnection Complete event carries.
    public init(hciReason: UInt8) {
        switch hciReason {
        case Self.remoteUserTerminatedCode: self = .remoteUserTerminated
        case Self.connectionTimeoutCode: self = .supervisionTimeout
        case Self.localHostTerminatedCode: self = .localHostTerminated
        default: self = .hciError(hciReason)
        }
    }

    /// The code a controller sends for this reason (a lost transport looks like a supervision
    /// timeout to the far side: the link just stops).
    public var hciReason: UInt8 {
        switch self {
        case .remoteUserTerminated: Self.remoteUserTerminatedCode
        case .supervisionTimeout, .transportLost: Self.connectionTimeoutCode
        case .localHostTerminated: Self.localHostTerminatedCode
        case .hciError(let code): code
        }
    }
}
