import HAL

/// The Weight Scale Feature value (characteristic 0x2A9E), a 32-bit little-endian field:
/// bit 0 time stamp supported, bit 1 multiple users supported, bit 2 BMI supported,
/// bits 3–6 weight resolution, bits 7–9 height resolution (WSS 1.0 §3.1).
public struct WeightScaleFeature: Hashable, Sendable {
    /// The 32-bit feature field as read; the accessors below decode its bits.
    public var rawValue: UInt32

    /// Wraps a feature field already decoded, e.g. for tests or a cached read.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Decodes the characteristic value (u32 little-endian); throws when it is shorter than 4 bytes.
    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        rawValue = try reader.u32("the feature field")
    }

    /// Bit 0: measurements may carry a time stamp.
    public var timeStampSupported: Bool { rawValue & 1 << 0 != 0 }
    /// Bit 1: the scale tells users apart, so measurements may carry a user ID.
    public var multipleUsersSupported: Bool { rawValue & 1 << 1 != 0 }
    /// Bit 2: measurements may carry BMI and height.
    public var bmiSupported: Bool { rawValue & 1 << 2 != 0 }
    /// Bits 3–6: the step the scale weighs in.
    public var weightResolution: MassResolution { MassResolution(code: UInt8((rawValue >> 3) & 0x0F)) }
    /// Bits 7–9: the step the scale reports height in.
    public var heightResolution: HeightResolution { HeightResolution(code: UInt8((rawValue >> 7) & 0x07)) }
}

/// How finely a scale measures mass: the 4-bit code shared by the Weight Scale Feature
/// (bits 3–6) and the Body Composition Feature (bits 11–14).
public enum MassResolution: Hashable, Sendable {
    /// Code 0: the scale does not say how finely it weighs.
    case notSpecified
    /// Step in kilograms (SI) and in pounds (imperial).
    case step(kilograms: Double, pounds: Double)
    /// Codes 8–15, reserved by the spec; the code is kept as received.
    case reserved(UInt8)

    private static let steps: [(Double, Double)] =
        [(0.5, 1), (0.2, 0.5), (0.1, 0.2), (0.05, 0.1), (0.02, 0.05), (0.01, 0.02), (0.005, 0.01)]

    /// Decodes the 4-bit code: 1 is 0.5 kg / 1 lb down to 7, 0.005 kg / 0.01 lb.
    public init(code: UInt8) {
        switch code {
        case 0: self = .notSpecified
        case 1...7:
            let (kg, lb) = Self.steps[Int(code) - 1]
            self = .step(kilograms: kg, pounds: lb)
        default: self = .reserved(code)
        }
    }
}

/// How finely a scale measures height: the 3-bit code of the Weight Scale Feature (bits 7–9)
/// and the Body Composition Feature (bits 15–17).
public enum HeightResolution: Hashable, Sendable {
    /// Code 0: the scale does not say how finely it measures height.
    case notSpecified
    /// Step in metres (SI) and in inches (imperial).
    case step(metres: Double, inches: Double)
    /// Codes 4–7, reserved by the spec; the code is kept as received.
    case reserved(UInt8)

    private static let steps: [(Double, Double)] = [(0.01, 1), (0.005, 0.5), (0.001, 0.1)]

    /// Decodes the 3-bit code: 1 is 0.01 m / 1 in, 2 is 0.005 m / 0.5 in, 3 is 0.001 m / 0.1 in.
    public init(code: UInt8) {
        switch code {
        case 0: self = .notSpecified
        case 1...3:
            let (m, inch) = Self.steps[Int(code) - 1]
            self = .step(metres: m, inches: inch)
        default: self = .reserved(code)
        }
    }
}
