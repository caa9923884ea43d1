import HAL

/// What a person may choose about a vendor scale's session, whichever family it is: the unit
/// the scale is asked to show, and how long its opening exchange may take. One value, so each
/// vendor driver holds the same two settings the same way (a family with more, like a person's
/// profile, keeps those beside it).
public struct VendorScaleOptions: Hashable, Sendable {
    /// The unit the scale is told to show (the families here report kilograms whatever they show).
    public var displayUnit: WeightUnit
    /// How long the opening exchange may take before the session fails with a readable error.
    public var handshakeDeadline: Duration

    /// Kilograms and the shared vendor handshake deadline unless told otherwise.
    public init(displayUnit: WeightUnit = .kilograms, handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        self.displayUnit = displayUnit
        self.handshakeDeadline = handshakeDeadline
    }
}
