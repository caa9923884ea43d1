import HAL

/// A Security Manager Protocol PDU, as carried on the LE Security Manager fixed channel (L2CAP
/// CID 0x0006): a code octet, then parameters of one fixed length per code (Vol 3 Part H §3.3,
/// §3.5, §3.6). Multi-octet values are held most significant first, as the specification writes
/// them; the PDU carries them least significant first.
///
/// Parsing is strict: an unknown code, any length but the command's own, or a reserved value in a
/// field that has no room for one (IO capability, OOB flag, address type, keypress type) throws,
/// and ``SMPParseError/pairingFailureReason`` says what to answer. Reserved bits inside AuthReq and
/// the key distribution octets are kept as they came, so whatever parses writes back to its bytes.
public enum SMPPDU: Hashable, Sendable {
    /// The initiator (central) starts pairing: what it can do and wants.
    case pairingRequest(PairingFeatures)
    /// The responder (peripheral) answers with what it can do and wants.
    case pairingResponse(PairingFeatures)
    /// A commitment to a random value: legacy Mconfirm/Sconfirm (`c1`), Secure Connections Ca/Cb (`f4`).
    case pairingConfirm(SecurityKey)
    /// The random value behind the last confirm: Mrand/Srand, Na/Nb.
    case pairingRandom(SecurityKey)
    /// The pairing is over, failed, for this reason.
    case pairingFailed(PairingFailureReason)
    /// Legacy key distribution: the LTK.
    case encryptionInformation(ltk: SecurityKey)
    /// Legacy key distribution: the EDIV and Rand that name the LTK just sent.
    case centralIdentification(ediv: UInt16, rand: UInt64)
    /// The sender's Identity Resolving Key.
    case identityInformation(irk: SecurityKey)
    /// The sender's identity address (public, or static random).
    case identityAddressInformation(BLEAddress)
    /// The sender's Connection Signature Resolving Key (hwprobe never asks for it).
    case signingInformation(csrk: SecurityKey)
    /// The peripheral asks the central to secure the link, with these requirements.
    case securityRequest(AuthenticationRequirements)
    /// Secure Connections: the sender's P-256 public key.
    case pairingPublicKey(P256PublicKey)
    /// Secure Connections: the DHKey check value Ea/Eb (`f6`).
    case pairingDHKeyCheck(SecurityKey)
    /// What the user did on a keyboard during Passkey Entry.
    case keypressNotification(KeypressNotification)

    /// The command codes (Vol 3 Part H §3.3, Table 3.3).
    /// Matching a code without building a PDU (a malformed Pairing Failed is still one, and is
    /// never answered).
    public enum Code {
        /// The initiator's features.
        public static let pairingRequest: UInt8 = 0x01
        /// The responder's features.
        public static let pairingResponse: UInt8 = 0x02
        /// A commitment to a random value.
        public static let pairingConfirm: UInt8 = 0x03
        /// The random value behind a commitment.
        public static let pairingRandom: UInt8 = 0x04
        /// The pairing failed, with a reason.
        public static let pairingFailed: UInt8 = 0x05
        /// A legacy LTK.
        public static let encryptionInformation: UInt8 = 0x06
        /// The EDIV and Rand of a legacy LTK.
        public static let centralIdentification: UInt8 = 0x07
        /// An IRK.
        public static let identityInformation: UInt8 = 0x08
        /// An identity address.
        public static let identityAddressInformation: UInt8 = 0x09
        /// A CSRK.
        public static let signingInformation: UInt8 = 0x0A
        /// A peripheral asking to be secured.
        public static let securityRequest: UInt8 = 0x0B
        /// A P-256 public key.
        public static let pairingPublicKey: UInt8 = 0x0C
        /// A DHKey check value.
        public static let pairingDHKeyCheck: UInt8 = 0x0D
        /// A keypress during Passkey Entry.
        public static let keypressNotification: UInt8 = 0x0E
    }

    /// Each code's name and parameter length, indexed by code.
    private static let layouts: [UInt8: (name: String, length: Int)] = [
        Code.pairingRequest: ("Pairing Request", 6),
        Code.pairingResponse: ("Pairing Response", 6),
        Code.pairingConfirm: ("Pairing Confirm", 16),
        Code.pairingRandom: ("Pairing Random", 16),
        Code.pairingFailed: ("Pairing Failed", 1),
        Code.encryptionInformation: ("Encryption Information", 16),
        Code.centralIdentification: ("Central Identification", 10),
        Code.identityInformation: ("Identity Information", 16),
        Code.identityAddressInformation: ("Identity Address Information", 7),
        Code.signingInformation: ("Signing Information", 16),
        Code.securityRequest: ("Security Request", 1),
        Code.pairingPublicKey: ("Pairing Public Key", 64),
        Code.pairingDHKeyCheck: ("Pairing DHKey Check", 16),
        Code.keypressNotification: ("Pairing Keypress Notification", 1),
    ]

    /// Reads one PDU: the whole payload of an SMP L2CAP frame.
    public init(parsing bytes: [UInt8]) throws(SMPParseError) {
        guard let code = bytes.first else { throw .empty }
        guard let layout = Self.layouts[code] else { throw .unknownCode(code) }
        let parameters = Array(bytes.dropFirst())
        guard parameters.count == layout.length else {
            throw .wrongLength(code: code, name: layout.name, expected: layout.length, actual: parameters.count)
        }
        let p = parameters
        switch code {
        case Code.pairingRequest: self = .pairingRequest(try Self.features(p, layout.name))
        case Code.pairingResponse: self = .pairingResponse(try Self.features(p, layout.name))
        case Code.pairingConfirm: self = .pairingConfirm(SecurityKey(unchecked: p.reversed()))
        case Code.pairingRandom: self = .pairingRandom(SecurityKey(unchecked: p.reversed()))
        case Code.pairingFailed: self = .pairingFailed(PairingFailureReason(rawValue: p[0]))
        case Code.encryptionInformation: self = .encryptionInformation(ltk: SecurityKey(unchecked: p.reversed()))
        case Code.centralIdentification:
            let ediv = UInt16(p[0]) | UInt16(p[1]) << 8
            var rand: UInt64 = 0
            for index in 0..<8 { rand |= UInt64(p[2 + index]) << (8 * UInt64(index)) }
            self = .centralIdentification(ediv: ediv, rand: rand)
        case Code.identityInformation: self = .identityInformation(irk: SecurityKey(unchecked: p.reversed()))
        case Code.identityAddressInformation:
            let kind: BLEAddress.Kind
            switch p[0] {
            case 0x00: kind = .public
            case 0x01: kind = .random
            default: throw .invalidValue("\(layout.name): address type 0x\(Hex.byte(p[0])) is reserved")
            }
            guard let address = BLEAddress(littleEndian: p[1...], kind: kind) else {
                throw .invalidValue("\(layout.name): the address is not 6 bytes")
            }
            self = .identityAddressInformation(address)
        case Code.signingInformation: self = .signingInformation(csrk: SecurityKey(unchecked: p.reversed()))
        case Code.securityRequest: self = .securityRequest(AuthenticationRequirements(rawValue: p[0]))
        case Code.pairingPublicKey:
            guard let key = P256PublicKey(x: p[0..<32].reversed(), y: p[32..<64].reversed()) else {
                throw .invalidValue("\(layout.name): coordinates are not 32 bytes each")
            }
            self = .pairingPublicKey(key)
        case Code.pairingDHKeyCheck: self = .pairingDHKeyCheck(SecurityKey(unchecked: p.reversed()))
        default:
            guard let type = KeypressNotification(rawValue: p[0]) else {
                throw .invalidValue("\(layout.name): notification type \(p[0]) is reserved")
            }
            self = .keypressNotification(type)
        }
    }

    private static func features(_ p: [UInt8], _ name: String) throws(SMPParseError) -> PairingFeatures {
        guard let io = IOCapability(rawValue: p[0]) else {
            throw .invalidValue("\(name): IO capability 0x\(Hex.byte(p[0])) is reserved")
        }
        guard p[1] <= 0x01 else { throw .invalidValue("\(name): OOB data flag 0x\(Hex.byte(p[1])) is reserved") }
        return PairingFeatures(ioCapability: io, oobDataPresent: p[1] == 0x01, authentication: AuthenticationRequirements(rawValue: p[2]),
                               maximumKeySize: p[3], initiatorKeys: KeyDistribution(rawValue: p[4]),
                               responderKeys: KeyDistribution(rawValue: p[5]))
    }

    /// The code octet.
    public var code: UInt8 {
        switch self {
        case .pairingRequest: Code.pairingRequest
        case .pairingResponse: Code.pairingResponse
        case .pairingConfirm: Code.pairingConfirm
        case .pairingRandom: Code.pairingRandom
        case .pairingFailed: Code.pairingFailed
        case .encryptionInformation: Code.encryptionInformation
        case .centralIdentification: Code.centralIdentification
        case .identityInformation: Code.identityInformation
        case .identityAddressInformation: Code.identityAddressInformation
        case .signingInformation: Code.signingInformation
        case .securityRequest: Code.securityRequest
        case .pairingPublicKey: Code.pairingPublicKey
        case .pairingDHKeyCheck: Code.pairingDHKeyCheck
        case .keypressNotification: Code.keypressNotification
        }
    }

    /// The kind of key a key-distribution PDU carries, as output and cassettes name it (`ltk`,
    /// `ediv-rand`, `irk`, `identity-address`, `csrk`); nil for every other PDU. Never the value.
    public var keyKind: String? {
        switch self {
        case .encryptionInformation: "ltk"
        case .centralIdentification: "ediv-rand"
        case .identityInformation: "irk"
        case .identityAddressInformation: "identity-address"
        case .signingInformation: "csrk"
        default: nil
        }
    }

    /// The specification's name of the command, for logs and failure messages.
    public var name: String { Self.layouts[code]?.name ?? "SMP command" }

    /// The PDU's bytes: code, then parameters, multi-octet values least significant first.
    public var encoded: [UInt8] {
        let parameters: [UInt8] = switch self {
        case .pairingRequest(let f), .pairingResponse(let f): f.encoded
        case .pairingConfirm(let v), .pairingRandom(let v), .pairingDHKeyCheck(let v): v.littleEndianBytes
        case .pairingFailed(let reason): [reason.rawValue]
        case .encryptionInformation(let key), .identityInformation(let key), .signingInformation(let key): key.littleEndianBytes
        case .centralIdentification(let ediv, let rand): LittleEndian.u16(ediv) + LittleEndian.u64(rand)
        case .identityAddressInformation(let address): [address.kind == .public ? 0x00 : 0x01] + address.littleEndianBytes
        case .securityRequest(let auth): [auth.rawValue]
        case .pairingPublicKey(let key): key.littleEndianBytes
        case .keypressNotification(let type): [type.rawValue]
        }
        return [code] + parameters
    }

    /// The 7 octets `c1` takes as `preq` / `pres`: the whole command, code least significant
    /// (Vol 3 Part H §2.2.3), i.e. the PDU's bytes in reverse.
    var c1Value: [UInt8] { encoded.reversed() }
}
