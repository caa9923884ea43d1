import BLEProtocol
import HAL
import Testing

@Suite struct AddressResolverTests {
    static let specIRK = SecurityKey(bytes: Hex.bytes("ec0234a357c8ad05341010a60a397d9b") ?? [])!
    static let specIdentity = BLEAddress(string: "C0:DE:C0:DE:00:01", defaultKind: .random)!
    static let otherIdentity = BLEAddress(string: "00:1B:DC:00:00:02")!

    static func address(_ text: String) -> BLEAddress { BLEAddress(string: text, defaultKind: .random)! }

    @Test func theSpecificationsSampleResolvesToItsIdentity() {
        // Vol 3 Part H Appendix D.7: prand 0x708194, hash 0x0dfbaa under this IRK.
        var resolver = AddressResolver([ResolvingIdentity(irk: SecurityKey(number: 5), identity: Self.otherIdentity),
                                        ResolvingIdentity(irk: Self.specIRK, identity: Self.specIdentity)])
        #expect(resolver.resolve(Self.address("70:81:94:0D:FB:AA")) == Self.specIdentity)
        // One bit off in the hash is nobody's.
        #expect(resolver.resolve(Self.address("70:81:94:0D:FB:AB")) == nil)
    }

    @Test func aGeneratedAddressResolvesAndOnlyWithItsIRK() throws {
        var random = SecurityRandom.seeded(11)
        let otherIRK = SecurityKey(number: 77)
        let mine = try ResolvablePrivateAddress.make(irk: Self.specIRK, random: &random)
        let theirs = try ResolvablePrivateAddress.make(irk: otherIRK, random: &random)
        var resolver = AddressResolver([ResolvingIdentity(irk: Self.specIRK, identity: Self.specIdentity)])
        #expect(resolver.resolve(mine) == Self.specIdentity)
        #expect(resolver.resolve(theirs) == nil)
        // Once the other device bonds, its earlier "nobody's" answer is asked again.
        resolver.add(ResolvingIdentity(irk: otherIRK, identity: Self.otherIdentity))
        #expect(resolver.resolve(theirs) == Self.otherIdentity)
    }

    @Test func aKnownAddressCostsNoAES() throws {
        var random = SecurityRandom.seeded(12)
        let identities = (1...4).map { ResolvingIdentity(irk: SecurityKey(number: UInt32($0)), identity: BLEAddress(bytes: [0, 0, 0, 0, 0, UInt8($0)])!) }
        var resolver = AddressResolver(identities)
        let last = try ResolvablePrivateAddress.make(irk: identities[3].irk, random: &random)
        #expect(resolver.resolve(last) == identities[3].identity)
        #expect(resolver.hashesComputed == 4)
        for _ in 0..<100 { #expect(resolver.resolve(last) == identities[3].identity) }
        let stranger = try ResolvablePrivateAddress.make(irk: SecurityKey(number: 99), random: &random)
        for _ in 0..<100 { #expect(resolver.resolve(stranger) == nil) }
        #expect(resolver.hashesComputed == 8)
    }

    @Test func onlyResolvableAddressesAreTried() throws {
        var resolver = AddressResolver([ResolvingIdentity(irk: Self.specIRK, identity: Self.specIdentity)])
        // Public, static random (top bits 11) and non-resolvable private (00): no AES at all.
        #expect(resolver.resolve(BLEAddress(string: "70:81:94:0D:FB:AA")!) == nil)
        #expect(resolver.resolve(Self.address("F0:81:94:0D:FB:AA")) == nil)
        #expect(resolver.resolve(Self.address("30:81:94:0D:FB:AA")) == nil)
        #expect(resolver.hashesComputed == 0)
    }

    @Test func anAllZeroIRKIsLeftOut() throws {
        var random = SecurityRandom.seeded(13)
        let forged = try ResolvablePrivateAddress.make(irk: .zero, random: &random)
        var resolver = AddressResolver([ResolvingIdentity(irk: .zero, identity: Self.specIdentity)])
        resolver.add(ResolvingIdentity(irk: .zero, identity: Self.otherIdentity))
        #expect(resolver.identities.isEmpty)
        #expect(resolver.resolve(forged) == nil)
    }

    @Test func bondsGiveTheirIRKs() throws {
        var random = SecurityRandom.seeded(14)
        let bonded = Bond(identity: Self.specIdentity, irk: Self.specIRK, centralKey: nil, peripheralKey: nil,
                          isAuthenticated: true, isSecureConnections: true, keySize: 16)
        let noIRK = Bond(identity: Self.otherIdentity, irk: nil, centralKey: nil, peripheralKey: nil,
                         isAuthenticated: false, isSecureConnections: true, keySize: 16)
        var resolver = AddressResolver(bonds: [noIRK, bonded])
        #expect(resolver.identities.map(\.identity) == [Self.specIdentity])
        #expect(resolver.resolve(try ResolvablePrivateAddress.make(irk: Self.specIRK, random: &random)) == Self.specIdentity)
    }
}

@Suite struct PrivateAddressRotationTests {
    @Test func theAddressLastsItsRenewalThenChangesAndAlwaysResolves() throws {
        let irk = AddressResolverTests.specIRK
        var rotation = PrivateAddressRotation(irk: irk, renewal: .seconds(900))
        var random = SecurityRandom.seeded(21)
        var resolver = AddressResolver([ResolvingIdentity(irk: irk, identity: AddressResolverTests.specIdentity)])
        #expect(rotation.renewalDue == nil)
        let first = try rotation.address(at: .seconds(10), random: &random)
        #expect(rotation.renewalDue == .seconds(910))
        #expect(try rotation.address(at: .seconds(909), random: &random) == first)
        #expect(!rotation.isDue(at: .seconds(909)))
        #expect(rotation.isDue(at: .seconds(910)))
        let second = try rotation.address(at: .seconds(910), random: &random)
        #expect(second != first)
        #expect(rotation.renewalDue == .seconds(1810))
        for address in [first, second] {
            #expect(ResolvablePrivateAddress.isResolvable(address))
            #expect(resolver.resolve(address) == AddressResolverTests.specIdentity)
        }
    }

    @Test func aRenewalUnderASecondIsASecond() {
        #expect(PrivateAddressRotation(irk: SecurityKey(number: 3), renewal: .milliseconds(1)).renewal == .seconds(1))
    }
}
