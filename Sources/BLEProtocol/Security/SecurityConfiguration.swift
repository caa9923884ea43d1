/// What this side of a link offers and insists on when pairing: the CLI's `--io`, `--legacy`,
/// `serve --pairing` and the bond store's identity, as the Security Manager uses them.
public struct SecurityConfiguration: Hashable, Sendable {
    /// Whether Secure Connections is offered, required, or left out (`--legacy`).
    public enum SecureConnections: Hashable, Sendable {
        /// Offered; legacy pairing when the peer lacks it.
        case preferred
        /// Required: a peer without it is refused (Authentication Requirements).
        case only
        /// Not offered: legacy pairing even with a peer that has it.
        case legacyOnly
    }

    /// What our user can see and type here.
    public var ioCapability: IOCapability
    /// As a responder, pairing at all (`serve --pairing off` refuses with Pairing Not Supported).
    public var acceptsPairing: Bool
    /// Keys are kept (Bonding_Flags = Bonding); without it no key is distributed or stored.
    public var bondable: Bool
    /// Only an authenticated pairing (not Just Works) is accepted; MITM is asked for.
    public var requiresMITM: Bool
    /// LE Secure Connections offered, required or left out.
    public var secureConnections: SecureConnections
    /// The shortest encryption key accepted (7–16 octets).
    public var minimumKeySize: Int
    /// The longest encryption key offered (7–16 octets; 16 unless a test plays a smaller device).
    public var maximumKeySize: Int
    /// Our identity (IRK and identity address), sent when the peer asks for it; nil: none to send.
    public var localIdentity: LocalIdentity?

    /// Defaults: no IO (Just Works), pairing accepted, bonding, no MITM required, Secure
    /// Connections preferred, keys of 7 to 16 bytes, no identity to send.
    public init(ioCapability: IOCapability = .noInputNoOutput, acceptsPairing: Bool = true, bondable: Bool = true,
                requiresMITM: Bool = false, secureConnections: SecureConnections = .preferred, minimumKeySize: Int = 7,
                maximumKeySize: Int = 16, localIdentity: LocalIdentity? = nil) {
        self.ioCapability = ioCapability
        self.acceptsPairing = acceptsPairing
        self.bondable = bondable
        self.requiresMITM = requiresMITM
        self.secureConnections = secureConnections
        self.minimumKeySize = min(16, max(7, minimumKeySize))
        self.maximumKeySize = min(16, max(7, maximumKeySize))
        self.localIdentity = localIdentity
    }

    /// The AuthReq octet we send.
    var authentication: AuthenticationRequirements {
        var auth: AuthenticationRequirements = []
        if bondable { auth.insert(.bonding) }
        if requiresMITM { auth.insert(.mitm) }
        if secureConnections != .legacyOnly { auth.insert(.secureConnections) }
        return auth
    }

    /// The keys we can send: an LTK in legacy pairing, our identity when we have one.
    var keysWeSend: KeyDistribution {
        guard bondable else { return [] }
        return localIdentity == nil ? [.encryptionKey] : [.encryptionKey, .identityKey]
    }

    /// The keys we ask the peer for: its LTK (legacy) and its identity.
    var keysWeWant: KeyDistribution { bondable ? [.encryptionKey, .identityKey] : [] }
}
