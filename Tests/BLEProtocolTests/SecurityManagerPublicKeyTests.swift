import BLEProtocol
import HAL
import Testing

/// What each role does with a peer's public key that must not be used: off the curve (the
/// invalid-curve attack, Y zeroed as in the fixed-coordinate variant), the published debug key,
/// or our own key sent back.
@Suite struct SecurityManagerPublicKeyTests {
    typealias Side = PairingHarness.Side

    static func link() -> PairingHarness {
        PairingHarness(central: SecurityConfiguration(ioCapability: .noInputNoOutput), peripheral: SecurityConfiguration(ioCapability: .noInputNoOutput))
    }

    /// Replaces `side`'s public key on the link with `replacement(of: key)`.
    static func rewriting(_ side: Side, _ replacement: @escaping @Sendable (P256PublicKey) -> P256PublicKey?) -> (Side, SMPPDU) -> SMPPDU {
        { sender, pdu in
            guard sender == side, case .pairingPublicKey(let key) = pdu, let bad = replacement(key) else { return pdu }
            return .pairingPublicKey(bad)
        }
    }

    @Sendable static func offCurve(_ key: P256PublicKey) -> P256PublicKey? {
        var y = key.y
        y[31] ^= 0x01
        return P256PublicKey(x: key.x, y: y)
    }

    @Test(arguments: [Side.central, Side.peripheral])
    func aKeyOffTheCurveIsRefusedWithDHKeyCheckFailed(sender: Side) throws {
        let receiver: Side = sender == .central ? .peripheral : .central
        let zeroY: @Sendable (P256PublicKey) -> P256PublicKey? = { P256PublicKey(x: $0.x, y: [UInt8](repeating: 0, count: 32)) }
        for bad in [Self.offCurve, zeroY] {
            var link = Self.link()
            link.tamper = Self.rewriting(sender, bad)
            link.run(.pair, on: .central)
            let failure = try #require(link.failure(receiver))
            #expect(failure.cause == .sent(.dhKeyCheckFailed))
            #expect(failure.detail.contains("not a point on the P-256 curve"))
            #expect(link.failure(sender)?.cause == .received(.dhKeyCheckFailed))
            // Nothing after the refusal: no confirm computed from the bad key, nothing kept.
            #expect(link.sent(by: receiver).last == "Pairing Failed")
            #expect(!link.sent(by: receiver).contains("Pairing Confirm"))
            #expect(link.central.bond == nil && link.peripheral.bond == nil)
        }
    }

    @Test func theDebugKeyIsRefused() throws {
        var link = Self.link()
        let debugX = Hex.bytes("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6") ?? []
        let debugY = Hex.bytes("dc809c49652aeb6d63329abf5a52155c766345c28fed3024741c8ed01589d28b") ?? []
        link.tamper = Self.rewriting(.central) { _ in P256PublicKey(x: debugX, y: debugY) }
        link.run(.pair, on: .central)
        #expect(link.failure(.peripheral)?.cause == .sent(.authenticationRequirements))
    }

    @Test func ourOwnKeySentBackIsRefused() throws {
        // The peripheral answers with the central's own key (a reflection).
        var link = Self.link()
        let centralKey = LockedKey()
        link.tamper = { sender, pdu in
            guard case .pairingPublicKey(let key) = pdu else { return pdu }
            if sender == .central { centralKey.value = key; return pdu }
            return centralKey.value.map { .pairingPublicKey($0) } ?? pdu
        }
        link.run(.pair, on: .central)
        #expect(link.failure(.central)?.cause == .sent(.unspecified))
        #expect(link.failure(.central)?.detail.contains("our own public key") == true)
    }
}

/// A key the tampering closure remembers between calls.
final class LockedKey: @unchecked Sendable {
    var value: P256PublicKey?
}
