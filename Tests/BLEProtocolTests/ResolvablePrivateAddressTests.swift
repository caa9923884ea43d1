import BLEProtocol
import HAL
import Testing

@Suite struct ResolvablePrivateAddressTests {
    static let irk = SecurityKey(bytes: Hex.bytes("ec0234a357c8ad05341010a60a397d9b") ?? [])!

    @Test func theSpecificationsSampleResolves() throws {
        // Appendix D.7: prand 0x708194 gives hash 0x0dfbaa under this IRK.
        let address = try #require(BLEAddress(string: "70:81:94:0D:FB:AA", defaultKind: .random))
        #expect(ResolvablePrivateAddress.isResolvable(address))
        #expect(ResolvablePrivateAddress.resolves(address, with: Self.irk))
        // One bit off in the hash, another IRK, the public kind: not this device.
        #expect(!ResolvablePrivateAddress.resolves(try #require(BLEAddress(string: "70:81:94:0D:FB:AB", defaultKind: .random)), with: Self.irk))
        #expect(!ResolvablePrivateAddress.resolves(address, with: SecurityKey(number: 1)))
        #expect(!ResolvablePrivateAddress.resolves(try #require(BLEAddress(string: "70:81:94:0D:FB:AA", defaultKind: .public)), with: Self.irk))
    }

    @Test func madeAddressesResolveAndLookRandom() throws {
        var random = SecurityRandom.seeded(7)
        var seen: Set<BLEAddress> = []
        for _ in 0..<50 {
            let address = try ResolvablePrivateAddress.make(irk: Self.irk, random: &random)
            #expect(address.bytes[0] >> 6 == 0b01)
            #expect(ResolvablePrivateAddress.resolves(address, with: Self.irk))
            seen.insert(address)
        }
        #expect(seen.count == 50)
    }

    @Test func anAllZeroIRKResolvesNothing() throws {
        // bumble distributes an all-zero IRK; anyone can make addresses that "resolve" with it.
        var random = SecurityRandom.seeded(1)
        let forged = try ResolvablePrivateAddress.make(irk: SecurityKey.zero, random: &random)
        #expect(!ResolvablePrivateAddress.resolves(forged, with: .zero))
        let bond = Bond(identity: try #require(BLEAddress(string: "00:11:22:33:44:55")), irk: .zero, centralKey: nil, peripheralKey: nil,
                        isAuthenticated: false, isSecureConnections: true, keySize: 16)
        #expect(bond.irk == nil)
        #expect(!bond.matches(forged))
    }

    @Test func bondsAreFoundByIdentityOrByPrivateAddress() throws {
        var random = SecurityRandom.seeded(3)
        let identity = try #require(BLEAddress(string: "C1:22:33:44:55:66", defaultKind: .random))
        let bond = Bond(identity: identity, irk: Self.irk, centralKey: nil, peripheralKey: nil, isAuthenticated: true, isSecureConnections: true, keySize: 16)
        let other = Bond(identity: try #require(BLEAddress(string: "00:11:22:33:44:55")), irk: SecurityKey(number: 9), centralKey: nil,
                         peripheralKey: nil, isAuthenticated: true, isSecureConnections: true, keySize: 16)
        let rpa = try ResolvablePrivateAddress.make(irk: Self.irk, random: &random)
        #expect(ResolvablePrivateAddress.resolve(rpa, among: [other, bond]) == bond)
        #expect(ResolvablePrivateAddress.resolve(identity, among: [other, bond]) == bond)
        #expect(ResolvablePrivateAddress.resolve(try #require(BLEAddress(string: "40:00:00:00:00:01", defaultKind: .random)), among: [other, bond]) == nil)
    }
}
