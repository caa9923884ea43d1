import BLEProtocol
import HAL
import Testing

/// The SMP codec (Vol 3 Part H §3.5–3.6): every command from its bytes and back, values turned
/// around between the wire (least significant first) and the specification's notation, strict
/// lengths, reserved values, and every Pairing Failed reason.
@Suite struct SMPPDUTests {
    static func hex(_ text: String) -> [UInt8] {
        guard let bytes = Hex.bytes(text.filter { $0 != " " }) else { preconditionFailure("not hex: \(text)") }
        return bytes
    }

    static let sixteen = hex("00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f")
    static var sixteenKey: SecurityKey {
        guard let key = SecurityKey(littleEndian: sixteen) else { preconditionFailure("16 bytes") }
        return key
    }

    /// One of each command, with the bytes it must be.
    static func everyCommand() throws -> [(SMPPDU, [UInt8])] {
        let features = PairingFeatures(ioCapability: .keyboardDisplay, oobDataPresent: false,
                                       authentication: [.bonding, .mitm, .secureConnections], maximumKeySize: 16,
                                       initiatorKeys: [.encryptionKey, .identityKey], responderKeys: [.encryptionKey, .identityKey, .signingKey])
        let address = try #require(BLEAddress(string: "C0:11:22:33:44:55", defaultKind: .random))
        let x = Array(0..<32).map(UInt8.init)
        let y = Array(32..<64).map(UInt8.init)
        let publicKey = try #require(P256PublicKey(x: x.reversed(), y: y.reversed()))
        return [
            (.pairingRequest(features), hex("01 04 00 0d 10 03 07")),
            (.pairingResponse(features), hex("02 04 00 0d 10 03 07")),
            (.pairingConfirm(sixteenKey), [0x03] + sixteen),
            (.pairingRandom(sixteenKey), [0x04] + sixteen),
            (.pairingFailed(.confirmValueFailed), hex("05 04")),
            (.encryptionInformation(ltk: sixteenKey), [0x06] + sixteen),
            (.centralIdentification(ediv: 0x1234, rand: 0x0102_0304_0506_0708), hex("07 34 12 08 07 06 05 04 03 02 01")),
            (.identityInformation(irk: sixteenKey), [0x08] + sixteen),
            (.identityAddressInformation(address), hex("09 01 55 44 33 22 11 c0")),
            (.signingInformation(csrk: sixteenKey), [0x0A] + sixteen),
            (.securityRequest([.bonding, .mitm]), hex("0b 05")),
            (.pairingPublicKey(publicKey), [0x0C] + x + y),
            (.pairingDHKeyCheck(sixteenKey), [0x0D] + sixteen),
            (.keypressNotification(.digitEntered), hex("0e 01")),
        ]
    }

    @Test func everyCommandReadsAndWritesItsBytes() throws {
        for (pdu, bytes) in try Self.everyCommand() {
            #expect(pdu.encoded == bytes, "\(pdu.name)")
            #expect(try SMPPDU(parsing: bytes) == pdu, "\(pdu.name)")
        }
    }

    @Test func valuesAreHeldMostSignificantFirst() throws {
        guard case .pairingConfirm(let value) = try SMPPDU(parsing: [0x03] + Self.sixteen) else {
            Issue.record("not a confirm")
            return
        }
        #expect(value.bytes.first == 0x0F && value.bytes.last == 0x00)
        #expect(value.littleEndianBytes == Self.sixteen)
    }

    @Test func everyOtherLengthIsRefusedAsInvalidParameters() throws {
        for (pdu, bytes) in try Self.everyCommand() {
            for length in [1, bytes.count - 1, bytes.count + 1] where length != bytes.count && length >= 1 {
                let cut = Array((bytes + [0]).prefix(length))
                #expect(throws: SMPParseError.self, "\(pdu.name) with \(length - 1) parameter bytes") { try SMPPDU(parsing: cut) }
                do { _ = try SMPPDU(parsing: cut) } catch { #expect(error.pairingFailureReason == .invalidParameters) }
            }
        }
    }

    @Test func unknownCodesAreCommandNotSupported() {
        for code: UInt8 in [0x00, 0x0F, 0x10, 0x80, 0xFF] {
            #expect(throws: SMPParseError.unknownCode(code)) { try SMPPDU(parsing: [code]) }
            #expect(SMPParseError.unknownCode(code).pairingFailureReason == .commandNotSupported)
        }
        #expect(throws: SMPParseError.empty) { try SMPPDU(parsing: []) }
    }

    @Test func reservedValuesInNarrowFieldsAreRefused() {
        let refused: [[UInt8]] = [
            Self.hex("01 05 00 01 10 00 00"), // IO capability 5
            Self.hex("02 03 02 01 10 00 00"), // OOB flag 2
            Self.hex("09 02 55 44 33 22 11 c0"), // address type 2
            Self.hex("0e 05"), // keypress type 5
        ]
        for bytes in refused {
            #expect(throws: SMPParseError.self) { try SMPPDU(parsing: bytes) }
        }
    }

    @Test func reservedBitsAreKeptAsTheyCame() throws {
        // AuthReq bits 6–7 and key distribution bits 4–7 are reserved: ignored, written back.
        let bytes = Self.hex("01 03 00 c1 10 f3 f7")
        let pdu = try SMPPDU(parsing: bytes)
        #expect(pdu.encoded == bytes)
        guard case .pairingRequest(let features) = pdu else {
            Issue.record("not a request")
            return
        }
        #expect(features.authentication.wantsBonding)
        #expect(features.initiatorKeys.contains(.identityKey))
        // Bonding_Flags 10 and 11 are reserved: not bonding.
        #expect(!AuthenticationRequirements(rawValue: 0x02).wantsBonding)
        #expect(!AuthenticationRequirements(rawValue: 0x03).wantsBonding)
    }

    @Test func everyPairingFailedReasonHasItsName() throws {
        let names: [UInt8: String] = [
            0x01: "Passkey Entry Failed", 0x02: "OOB Not Available", 0x03: "Authentication Requirements",
            0x04: "Confirm Value Failed", 0x05: "Pairing Not Supported", 0x06: "Encryption Key Size",
            0x07: "Command Not Supported", 0x08: "Unspecified Reason", 0x09: "Repeated Attempts",
            0x0A: "Invalid Parameters", 0x0B: "DHKey Check Failed", 0x0C: "Numeric Comparison Failed",
            0x0D: "BR/EDR Pairing In Progress", 0x0E: "Cross-transport Key Derivation Not Allowed", 0x0F: "Key Rejected",
        ]
        for (code, name) in names {
            let reason = PairingFailureReason(rawValue: code)
            #expect(reason.name == name)
            #expect(try SMPPDU(parsing: [0x05, code]) == .pairingFailed(reason))
        }
        #expect(PairingFailureReason.confirmValueFailed.description == "0x04 Confirm Value Failed")
        // A reason from a later specification still reads and writes back.
        #expect(try SMPPDU(parsing: [0x05, 0x42]).encoded == [0x05, 0x42])
        #expect(PairingFailureReason(rawValue: 0x42).name == "reserved reason")
    }
}
