import HAL

/// One Body Composition Measurement value (characteristic 0x2A9C of the Body Composition
/// Service 0x181B), or one packet of a multi-packet measurement.
///
/// Layout (BCS 1.0 §3.2 and the GATT Specification Supplement, "Body Composition Measurement"),
/// little-endian, optional fields in this order when their flag is set:
/// flags u16 | body fat u16 (0.1 %) | time stamp (7) | user ID u8 | basal metabolism u16 (kJ) |
/// muscle u16 (0.1 %) | muscle mass u16 | fat free mass u16 | soft lean mass u16 |
/// body water mass u16 | impedance u16 (0.1 Ω) | weight u16 | height u16.
/// Masses are 0.005 kg (SI) or 0.01 lb (imperial); height 0.001 m or 0.1 in.
public struct BodyCompositionMeasurement: Hashable, Sendable {
    /// The 16-bit flags field (bytes 0–1): units, which optional fields follow, and whether
    /// this value is one packet of several.
    public struct Flags: OptionSet, Hashable, Sendable {
        /// The flags as received, reserved bits 13–15 included.
        public let rawValue: UInt16
        /// Wraps a flags field as is; reserved bits are kept, not rejected.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// Bit 0: masses in 0.01 lb and height in 0.1 in instead of 0.005 kg and 0.001 m.
        public static let imperialUnits = Flags(rawValue: 1 << 0)
        /// Bit 1: a 7-byte Date Time follows the body fat field.
        public static let timeStampPresent = Flags(rawValue: 1 << 1)
        /// Bit 2: a one-byte user ID is present.
        public static let userIDPresent = Flags(rawValue: 1 << 2)
        /// Bit 3: basal metabolism (u16, kJ) is present.
        public static let basalMetabolismPresent = Flags(rawValue: 1 << 3)
        /// Bit 4: muscle percentage (u16, 0.1 %) is present.
        public static let musclePercentagePresent = Flags(rawValue: 1 << 4)
        /// Bit 5: muscle mass (u16, mass units) is present.
        public static let muscleMassPresent = Flags(rawValue: 1 << 5)
        /// Bit 6: fat free mass (u16, mass units) is present.
        public static let fatFreeMassPresent = Flags(rawValue: 1 << 6)
        /// Bit 7: soft lean mass (u16, mass units) is present.
        public static let softLeanMassPresent = Flags(rawValue: 1 << 7)
        /// Bit 8: body water mass (u16, mass units) is present.
        public static let bodyWaterMassPresent = Flags(rawValue: 1 << 8)
        /// Bit 9: impedance (u16, 0.1 Ω) is present.
        public static let impedancePresent = Flags(rawValue: 1 << 9)
        /// Bit 10: weight (u16, mass units) is present.
        public static let weightPresent = Flags(rawValue: 1 << 10)
        /// Bit 11: height (u16, 0.001 m or 0.1 in) is present.
        public static let heightPresent = Flags(rawValue: 1 << 11)
        /// This value is one of the packets a long measurement was split into.
        public static let multiplePacketMeasurement = Flags(rawValue: 1 << 12)

        /// Every bit that announces a field (1–11).
        public static let fieldBits = Flags(rawValue: 0x0FFE)
    }

    /// The body fat field's special value: the analyser tried and could not measure.
    public static let unsuccessful: UInt16 = 0xFFFF

    /// The flags as received (for merged packets, the union without the multi-packet bit).
    public var flags: Flags
    /// The unit system from flag bit 0; fixes how the mass and height fields were scaled.
    public var units: UnitSystem
    /// Percent, or nil when the measurement was unsuccessful (0xFFFF).
    public var bodyFatPercent: Double?
    /// When the analyser took the measurement, if it sent a time stamp (flag bit 1).
    public var timeStamp: BluetoothDateTime?
    /// 0xFF means an unknown user.
    public var userID: UInt8?
    /// Basal metabolism in kilojoules (flag bit 3).
    public var basalMetabolismKilojoules: Double?
    /// Muscle as a percentage of body mass, 0.1 % resolution (flag bit 4).
    public var musclePercent: Double?
    /// Muscle mass in kg, converted from pounds when imperial (flag bit 5).
    public var muscleMassKilograms: Double?
    /// Fat free mass in kg, converted from pounds when imperial (flag bit 6).
    public var fatFreeMassKilograms: Double?
    /// Soft lean mass in kg, converted from pounds when imperial (flag bit 7).
    public var softLeanMassKilograms: Double?
    /// Body water mass in kg, converted from pounds when imperial (flag bit 8).
    public var bodyWaterMassKilograms: Double?
    /// Impedance in ohms, 0.1 Ω resolution (flag bit 9); passed on in the HAL reading.
    public var impedanceOhms: Double?
    /// Weight in kg, converted from pounds when imperial (flag bit 10); without it there is no reading.
    public var weightKilograms: Double?
    /// Height in metres, converted from 0.1 in when imperial (flag bit 11).
    public var heightMetres: Double?

    /// False when the body fat field held 0xFFFF ("measurement unsuccessful"); such a value gives no reading.
    public var isSuccessful: Bool { bodyFatPercent != nil }
    /// True for one packet of a split measurement (flag bit 12); it must be merged before it is read.
    public var isMultiplePacket: Bool { flags.contains(.multiplePacketMeasurement) }

    /// Decodes one characteristic value or packet; throws when it is shorter than its flags announce.
    public init(parsing bytes: [UInt8]) throws(StandardScaleParseError) {
        var reader = MeasurementReader(bytes)
        flags = Flags(rawValue: try reader.u16("the flags"))
        units = UnitSystem(flagBit: flags.contains(.imperialUnits))
        let fat = try reader.u16("the body fat percentage")
        bodyFatPercent = fat == Self.unsuccessful ? nil : Double(fat) * 0.1
        if flags.contains(.timeStampPresent) { timeStamp = try reader.dateTime("the time stamp") }
        if flags.contains(.userIDPresent) { userID = try reader.u8("the user ID") }
        if flags.contains(.basalMetabolismPresent) { basalMetabolismKilojoules = Double(try reader.u16("the basal metabolism")) }
        if flags.contains(.musclePercentagePresent) { musclePercent = Double(try reader.u16("the muscle percentage")) * 0.1 }
        if flags.contains(.muscleMassPresent) { muscleMassKilograms = units.kilograms(raw: try reader.u16("the muscle mass")) }
        if flags.contains(.fatFreeMassPresent) { fatFreeMassKilograms = units.kilograms(raw: try reader.u16("the fat free mass")) }
        if flags.contains(.softLeanMassPresent) { softLeanMassKilograms = units.kilograms(raw: try reader.u16("the soft lean mass")) }
        if flags.contains(.bodyWaterMassPresent) { bodyWaterMassKilograms = units.kilograms(raw: try reader.u16("the body water mass")) }
        if flags.contains(.impedancePresent) { impedanceOhms = Double(try reader.u16("the impedance")) * 0.1 }
        if flags.contains(.weightPresent) { weightKilograms = units.kilograms(raw: try reader.u16("the weight")) }
        if flags.contains(.heightPresent) { heightMetres = units.metres(raw: try reader.u16("the height")) }
    }

    /// Fills the fields this value lacks from `other` (a later packet of the same measurement).
    /// Flags become the union of both, without the multi-packet bit, so the result reads as one
    /// whole measurement.
    func merging(_ other: BodyCompositionMeasurement) throws(StandardScaleParseError) -> BodyCompositionMeasurement {
        guard other.units == units else { throw .inconsistentParts("one packet is SI, the other imperial") }
        var merged = self
        merged.flags = flags.union(other.flags).subtracting(.multiplePacketMeasurement)
        merged.bodyFatPercent = bodyFatPercent ?? other.bodyFatPercent
        merged.timeStamp = timeStamp ?? other.timeStamp
        merged.userID = userID ?? other.userID
        merged.basalMetabolismKilojoules = basalMetabolismKilojoules ?? other.basalMetabolismKilojoules
        merged.musclePercent = musclePercent ?? other.musclePercent
        merged.muscleMassKilograms = muscleMassKilograms ?? other.muscleMassKilograms
        merged.fatFreeMassKilograms = fatFreeMassKilograms ?? other.fatFreeMassKilograms
        merged.softLeanMassKilograms = softLeanMassKilograms ?? other.softLeanMassKilograms
        merged.bodyWaterMassKilograms = bodyWaterMassKilograms ?? other.bodyWaterMassKilograms
        merged.impedanceOhms = impedanceOhms ?? other.impedanceOhms
        merged.weightKilograms = weightKilograms ?? other.weightKilograms
        merged.heightMetres = heightMetres ?? other.heightMetres
        return merged
    }

    /// The HAL reading when this measurement carries a weight; nil without one or when unsuccessful.
    public var reading: WeightReading? {
        guard isSuccessful, let weightKilograms else { return nil }
        return WeightReading(kilograms: weightKilograms, stable: nil, displayUnit: units.displayUnit,
                             impedanceOhms: impedanceOhms, bodyFatPercent: bodyFatPercent)
    }
}
