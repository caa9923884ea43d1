import HAL

/// The Body Composition Feature value (characteristic 0x2A9B), a 32-bit little-endian field:
/// bits 0–10 say which optional fields the analyser can send (time stamp, multiple users, basal
/// metabolism, muscle percentage, muscle mass, fat free mass, soft lean mass, body water mass,
/// impedance, weight, height), bits 11–14 the mass resolution, bits 15–17 the height resolution
/// (BCS 1.0 §3.1).
public struct BodyCompositionFeature: Hashable, Sendable {
    /// The 32-bit feature field as read; the accessors below decode its bits.
    public var rawValue: UInt32

    /// Wraps a feature field already decoded, e.g. for tests or a cached read.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Decodes the characteristic value (u32 little-endian); throws when it is shorter than 4 bytes.
    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        rawValue = try reader.u32("the feature field")
    }

    private func bit(_ n: UInt32) -> Bool { rawValue & 1 << n != 0 }

    /// Bit 0: measurements may carry a time stamp.
    public var timeStampSupported: Bool { bit(0) }
    /// Bit 1: the analyser tells users apart, so measurements may carry a user ID.
    public var multipleUsersSupported: Bool { bit(1) }
    /// Bit 2: measurements may carry basal metabolism.
    public var basalMetabolismSupported: Bool { bit(2) }
    /// Bit 3: measurements may carry muscle percentage.
    public var musclePercentageSupported: Bool { bit(3) }
    /// Bit 4: measurements may carry muscle mass.
    public var muscleMassSupported: Bool { bit(4) }
    /// Bit 5: measurements may carry fat free mass.
    public var fatFreeMassSupported: Bool { bit(5) }
    /// Bit 6: measurements may carry soft lean mass.
    public var softLeanMassSupported: Bool { bit(6) }
    /// Bit 7: measurements may carry body water mass.
    public var bodyWaterMassSupported: Bool { bit(7) }
    /// Bit 8: measurements may carry impedance.
    public var impedanceSupported: Bool { bit(8) }
    /// Bit 9: measurements may carry weight; without it the analyser needs a separate weight scale.
    public var weightSupported: Bool { bit(9) }
    /// Bit 10: measurements may carry height.
    public var heightSupported: Bool { bit(10) }
    /// Bits 11–14: the step masses are reported in.
    public var massResolution: MassResolution { MassResolution(code: UInt8((rawValue >> 11) & 0x0F)) }
    /// Bits 15–17: the step height is reported in.
    public var heightResolution: HeightResolution { HeightResolution(code: UInt8((rawValue >> 15) & 0x07)) }
}
