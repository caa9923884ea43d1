import HAL

/// The Body Composition Feature value (characteristic 0x2A9B), a 32-bit little-endian field:
/// bits 0–10 say which optional fields the analyser can send (time stamp, multiple users, basal
/// metabolism, muscle percentage, muscle mass, fat free mass, soft lean mass, body water mass,
/// impedance, weight, height), bits 11–14 the mass resolution, bits 15–17 the height resolution
/// (BCS 1.0 §3.1).
public struct BodyCompositionFeature: Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        rawValue = try reader.u32("the feature field")
    }

    private func bit(_ n: UInt32) -> Bool { rawValue & 1 << n != 0 }

    public var timeStampSupported: Bool { bit(0) }
    public var multipleUsersSupported: Bool { bit(1) }
    public var basalMetabolismSupported: Bool { bit(2) }
    public var musclePercentageSupported: Bool { bit(3) }
    public var muscleMassSupported: Bool { bit(4) }
    public var fatFreeMassSupported: Bool { bit(5) }
    public var softLeanMassSupported: Bool { bit(6) }
    public var bodyWaterMassSupported: Bool { bit(7) }
    public var impedanceSupported: Bool { bit(8) }
    public var weightSupported: Bool { bit(9) }
    public var heightSupported: Bool { bit(10) }
    public var massResolution: MassResolution { MassResolution(code: UInt8((rawValue >> 11) & 0x0F)) }
    public var heightResolution: HeightResolution { HeightResolution(code: UInt8((rawValue >> 15) & 0x07)) }
}
