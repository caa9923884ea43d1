import HAL

/// One device whose resolvable private addresses can be recognised: the IRK it distributed and
/// the identity address it stands behind (Vol 3 Part H §3.6.4–3.6.5).
public struct ResolvingIdentity: Hashable, Sendable {
    /// The device's Identity Resolving Key (never all zeros: ``AddressResolver`` skips those).
    public var irk: SecurityKey
    /// Its public or static random identity address.
    public var identity: BLEAddress

    /// A device as a bond keeps it.
    public init(irk: SecurityKey, identity: BLEAddress) {
        self.irk = irk
        self.identity = identity
    }
}

/// Resolves advertised addresses to identity addresses with stored IRKs (Core Specification
/// Vol 6 Part B §1.3.2.3; `ah`, Vol 3 Part H §2.2.2), as a plain value the host feeds advertiser
/// addresses to: an address whose top bits are 01 is split into `prand` (its upper 24 bits) and
/// `hash` (its lower 24), and belongs to the identity whose IRK gives `ah(irk, prand) == hash`.
///
/// A device keeps one private address for about 15 minutes (the spec recommends renewing it
/// then, Vol 3 Part C §10.7.2) and advertises many times a second, so each address's answer —
/// found or not — is kept (``cacheLimit`` addresses, forgotten all at once beyond it): one
/// sighting costs one AES block per IRK, the next ones a dictionary lookup.
public struct AddressResolver: Sendable {
    /// The identities recognised, in the order they are tried.
    public private(set) var identities: [ResolvingIdentity]
    /// How many `ah` computations resolving has made: what the cache saves, for tests and `-v`.
    public private(set) var hashesComputed = 0
    private var answers: [BLEAddress: BLEAddress?] = [:]

    /// Addresses whose answer is remembered: a busy street's worth of phones for an hour.
    public static let cacheLimit = 4096

    /// A resolver for `identities`; an all-zero IRK is left out (it would resolve addresses
    /// anyone can make).
    public init(_ identities: [ResolvingIdentity] = []) {
        self.identities = identities.filter { !$0.irk.isZero }
    }

    /// A resolver for the IRKs `bonds` hold.
    public init(bonds: [Bond]) {
        self.init(bonds.compactMap { bond in bond.irk.map { ResolvingIdentity(irk: $0, identity: bond.identity) } })
    }

    /// Adds a device (a pairing that just bonded), replacing one with the same identity. Cached
    /// "not resolved" answers are dropped: one of them may be this device's.
    public mutating func add(_ identity: ResolvingIdentity) {
        guard !identity.irk.isZero else { return }
        identities.removeAll { $0.identity == identity.identity }
        identities.append(identity)
        answers = answers.filter { $0.value != nil }
    }

    /// The identity address behind `address`, or nil when it is not a resolvable private
    /// address or none of the IRKs made it.
    public mutating func resolve(_ address: BLEAddress) -> BLEAddress? {
        guard ResolvablePrivateAddress.isResolvable(address), !identities.isEmpty else { return nil }
        if let known = answers[address] { return known }
        var found: BLEAddress?
        for candidate in identities {
            hashesComputed += 1
            if ResolvablePrivateAddress.resolves(address, with: candidate.irk) {
                found = candidate.identity
                break
            }
        }
        if answers.count >= Self.cacheLimit { answers.removeAll(keepingCapacity: true) }
        answers[address] = .some(found)
        return found
    }
}
