import HAL

/// How a pairing ended well: the method, the security the link has, and what to keep.
public struct PairingOutcome: Hashable, Sendable {
    /// How the pairing was authenticated.
    public var method: PairingMethod
    /// The security the link has now.
    public var security: LinkSecurity
    /// The bond to store; nil unless both sides asked to bond (keys of a pairing that does not
    /// bond are forgotten with the link).
    public var bond: Bond?
    /// The peer's identity address when it sent one.
    public var peerIdentity: BLEAddress?
    /// The kinds of key exchanged or derived (`ltk`, `irk`), for output and cassettes: never values.
    public var keyNames: [String]
    /// The kinds of key this side sent in key distribution, in order (``SMPPDU/keyKind``), so a
    /// recording made on this side can say who distributed what without holding a key.
    public var sentKeyKinds: [String]
    /// The kinds of key the peer sent, in order.
    public var receivedKeyKinds: [String]

    /// The outcome as the Security Manager reports it.
    public init(method: PairingMethod, security: LinkSecurity, bond: Bond?, peerIdentity: BLEAddress?, keyNames: [String],
                sentKeyKinds: [String] = [], receivedKeyKinds: [String] = []) {
        self.method = method
        self.security = security
        self.bond = bond
        self.peerIdentity = peerIdentity
        self.keyNames = keyNames
        self.sentKeyKinds = sentKeyKinds
        self.receivedKeyKinds = receivedKeyKinds
    }
}
