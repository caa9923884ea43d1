import HAL

/// The Weight Scale Feature value (characteristic 0x2A9E), a 32-bit little-endian field:
/// bit 0 time stamp supported, bit 1 multiple users supported, bit 2 BMI supported,
/// bits 3–6 weight resolution, bits 7–9 height resolution (WSS 1.0 §3.1).
public struct WeightScaleFeature: Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        rawValue = try reader.u32("the feature field")
    }

    public var timeStampSupported: Bool { rawValue & 1 << 0 != 0 }
    public var multipleUsersSupported: Bool { rawValue & 1 << 1 != 0 }
    public var bmiSupported: Bool { rawValue & 1 << 2 != 0 }
    public var weightResolution: MassResolution { MassResolution(code: UInt8((rawValue >> 3) & 0x0F)) }
    public var heightResolution: HeightResolution { HeightResolution(code: UInt8((rawValue >> 7) & 0x07)) }
}

/// How finely a scale measures mass: the 4-bit code shared by the Weight Scale Feature
/// (bits 3–6) and the Body Composition Feature (bits 11–14).
public enum MassResolution: Hashable, Sendable {
    case notSpecified
    /// Step in kilograms (SI) and in pounds (imperial).
    case step(kilograms: Double, pounds: Double)
    case reserved(UInt8)

    private static let steps: [(Double, Double)] =
        [(0.5, 1), (0.2, 0.5), (0.1, 0.2), (0.05, 0.1), (0.02, 0.05), (0.01, 0.02), (0.005, 0.01)]

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
    case notSpecified
    case step(metres: Double, inches: Double)
    case reserved(UInt8)

    private static let steps: [(Double, Double)] = [(0.01, 1), (0.005, 0.5), (0.001, 0.1)]

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
