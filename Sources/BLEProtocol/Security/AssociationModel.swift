/// Picks the pairing method from the two sides' Pairing Request and Response, exactly as the
/// Core Specification's tables do (Vol 3 Part H §2.3.5.1): Table 2.6 (legacy) and Table 2.7
/// (Secure Connections) decide between OOB, Just Works and the IO capability mapping; Table 2.8
/// maps the two IO capabilities to a method.
public enum AssociationModel {
    /// The method for a pairing between `initiator`'s request and `responder`'s response;
    /// `secureConnections` is whether both set the SC flag. OOB is never selected here: a Security
    /// Manager without OOB data refuses before asking (see ``needsOOB(initiator:responder:secureConnections:)``).
    public static func method(initiator: PairingFeatures, responder: PairingFeatures, secureConnections: Bool) -> PairingMethod {
        // Tables 2.6 and 2.7: neither side asking for MITM means Just Works whatever the IO.
        guard initiator.authentication.contains(.mitm) || responder.authentication.contains(.mitm) else { return .justWorks }
        return ioMapping(initiator: initiator.ioCapability, responder: responder.ioCapability, secureConnections: secureConnections)
    }

    /// Whether the tables select Out of Band: legacy when both sides have OOB data, Secure
    /// Connections when either has the other's.
    public static func needsOOB(initiator: PairingFeatures, responder: PairingFeatures, secureConnections: Bool) -> Bool {
        secureConnections ? (initiator.oobDataPresent || responder.oobDataPresent)
                          : (initiator.oobDataPresent && responder.oobDataPresent)
    }

    /// Table 2.8: rows are the responder's capability, columns the initiator's.
    public static func ioMapping(initiator: IOCapability, responder: IOCapability, secureConnections: Bool) -> PairingMethod {
        let initiatorDisplays = PairingMethod.passkeyEntry(.initiator)
        let responderDisplays = PairingMethod.passkeyEntry(.responder)
        // The two cells where legacy and Secure Connections differ: Numeric Comparison needs SC.
        let yesNoPair: (legacy: PairingMethod, sc: PairingMethod)
        switch (responder, initiator) {
        case (.noInputNoOutput, _), (_, .noInputNoOutput):
            return .justWorks
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo),
             (.displayYesNo, .displayOnly):
            return .justWorks
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay),
             (.displayYesNo, .keyboardOnly), (.keyboardDisplay, .keyboardOnly):
            return responderDisplays
        case (.keyboardOnly, .displayOnly), (.keyboardOnly, .displayYesNo), (.keyboardOnly, .keyboardDisplay),
             (.keyboardDisplay, .displayOnly):
            return initiatorDisplays
        case (.keyboardOnly, .keyboardOnly):
            return .passkeyEntry(.neither)
        case (.displayYesNo, .displayYesNo):
            yesNoPair = (.justWorks, .numericComparison)
        case (.displayYesNo, .keyboardDisplay):
            yesNoPair = (responderDisplays, .numericComparison)
        case (.keyboardDisplay, .displayYesNo), (.keyboardDisplay, .keyboardDisplay):
            yesNoPair = (initiatorDisplays, .numericComparison)
        }
        return secureConnections ? yesNoPair.sc : yesNoPair.legacy
    }
}
