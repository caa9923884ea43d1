import HAL

/// Our own resolvable private address as a peripheral with privacy (Vol 3 Part C §10.7.1.2,
/// Vol 6 Part B §1.3.2.2): made from our IRK, kept for ``renewal`` and then replaced, so that
/// only a central holding the IRK (one we bonded with) links one address to the next. A plain
/// value on offsets of an injected clock: the caller asks for the address as it advertises and
/// wakes at ``renewalDue`` to advertise again.
public struct PrivateAddressRotation: Sendable {
    /// The IRK our addresses are made with (distributed to the centrals we bond with).
    public let irk: SecurityKey
    /// How long one address lasts: the spec's recommended 15 minutes
    /// (TGAP(private_addr_int), Vol 3 Part C Appendix A) unless configured.
    public let renewal: Duration
    /// The address advertised now, and when it was made; nil before the first.
    public private(set) var current: (address: BLEAddress, madeAt: Duration)?

    /// TGAP(private_addr_int)'s recommended value.
    public static let recommendedRenewal: Duration = .seconds(15 * 60)

    /// Rotation for `irk`; `renewal` at least a second (a shorter one is a configuration error
    /// that would make every advertisement a new device).
    public init(irk: SecurityKey, renewal: Duration = Self.recommendedRenewal) {
        self.irk = irk
        self.renewal = max(renewal, .seconds(1))
    }

    /// When the current address expires; nil before the first.
    public var renewalDue: Duration? { current.map { $0.madeAt + renewal } }

    /// Whether the address must be replaced at `now`.
    public func isDue(at now: Duration) -> Bool { renewalDue.map { now >= $0 } ?? true }

    /// The address to advertise from at `now`: the current one, or a new one when it is due.
    public mutating func address(at now: Duration, random: inout SecurityRandom) throws(SecurityCryptoError) -> BLEAddress {
        if let current, !isDue(at: now) { return current.address }
        var made = try ResolvablePrivateAddress.make(irk: irk, random: &random)
        // A new address must differ from the one it replaces (§1.3.2.2's point).
        while made == current?.address { made = try ResolvablePrivateAddress.make(irk: irk, random: &random) }
        current = (made, now)
        return made
    }
}
