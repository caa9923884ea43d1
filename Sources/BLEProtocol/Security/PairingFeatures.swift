/// The six parameters of a Pairing Request or Pairing Response (Vol 3 Part H §3.5.1–3.5.2): what
/// each side can do and wants, from which the pairing method, the key size and the keys sent are
/// decided.
public struct PairingFeatures: Hashable, Sendable {
    /// What the device can show and take from its user.
    public var ioCapability: IOCapability
    /// The device holds OOB authentication data of its peer (hwprobe never does).
    public var oobDataPresent: Bool
    /// Bonding, MITM, Secure Connections, keypress, CT2.
    public var authentication: AuthenticationRequirements
    /// The longest encryption key the device accepts, in octets (7–16 are valid; the Security
    /// Manager checks, the codec keeps what arrived).
    public var maximumKeySize: UInt8
    /// Keys the initiator (central) sends after encryption.
    public var initiatorKeys: KeyDistribution
    /// Keys the responder (peripheral) sends after encryption.
    public var responderKeys: KeyDistribution

    /// Features as a request or response states them; OOB data is absent unless said.
    public init(ioCapability: IOCapability, oobDataPresent: Bool = false, authentication: AuthenticationRequirements,
                maximumKeySize: UInt8 = 16, initiatorKeys: KeyDistribution, responderKeys: KeyDistribution) {
        self.ioCapability = ioCapability
        self.oobDataPresent = oobDataPresent
        self.authentication = authentication
        self.maximumKeySize = maximumKeySize
        self.initiatorKeys = initiatorKeys
        self.responderKeys = responderKeys
    }

    /// The six octets after the code.
    var encoded: [UInt8] {
        [ioCapability.rawValue, oobDataPresent ? 0x01 : 0x00, authentication.rawValue, maximumKeySize,
         initiatorKeys.rawValue, responderKeys.rawValue]
    }

    /// `f6`'s IOcap: AuthReq, OOB data flag and IO capability, most significant first (§2.2.8).
    var ioCapabilityTriple: [UInt8] { [authentication.rawValue, oobDataPresent ? 0x01 : 0x00, ioCapability.rawValue] }
}
