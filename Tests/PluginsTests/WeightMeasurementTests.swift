import TestKit
import HAL
import StandardScale
import Testing

/// Weight Measurement (0x2A9D) values. There is no published capture of a standard scale in the
/// sources we could find, so each value is spelled out byte by byte from WSS 1.0 §3.2 / the GATT
/// Specification Supplement: flags u8, weight u16 (0.005 kg or 0.01 lb), time stamp (7),
/// user ID u8, BMI u16 (0.1 kg/m²), height u16 (0.001 m or 0.1 in).
@Suite struct WeightMeasurementTests {
    static let kgPerLb = 0.45359237

    @Test func siWeightOnly() throws {
        // 00 | B0 36 = 14000 × 0.005 kg = 70.000 kg
        let reading = try #require(try WeightMeasurement.parse([0x00, 0xB0, 0x36]))
        #expect(approximately(reading.kilograms, 70.0))
        #expect(reading.stable == nil)
        #expect(reading.displayUnit == .kilograms)
        #expect(reading.bodyFatPercent == nil && reading.impedanceOhms == nil && !reading.loadRemoved)
    }

    @Test func imperialWeightIsConvertedToKilograms() throws {
        // 01 | 48 3C = 15432 × 0.01 lb = 154.32 lb
        let reading = try #require(try WeightMeasurement.parse([0x01, 0x48, 0x3C]))
        #expect(approximately(reading.kilograms, 154.32 * Self.kgPerLb))
        #expect(reading.displayUnit == .pounds)
    }

    @Test func resolutionsAreOneStep() throws {
        #expect(approximately(try WeightMeasurement.parse([0x00, 0x01, 0x00])?.kilograms, 0.005))
        #expect(approximately(try WeightMeasurement.parse([0x01, 0x01, 0x00])?.kilograms, 0.01 * Self.kgPerLb))
        // The largest successful value, 0xFFFE.
        #expect(approximately(try WeightMeasurement.parse([0x00, 0xFE, 0xFF])?.kilograms, 327.67))
        #expect(approximately(try WeightMeasurement.parse([0x01, 0xFE, 0xFF])?.kilograms, 655.34 * Self.kgPerLb))
    }

    @Test func timeStamp() throws {
        let value: [UInt8] = [0x02, 0xB0, 0x36] + SpecBytes.morning
        let measurement = try WeightMeasurement(parsing: value)
        #expect(measurement.timeStamp == BluetoothDateTime(year: 2024, month: 3, day: 15, hours: 7, minutes: 30, seconds: 0))
        #expect(measurement.userID == nil && measurement.bmi == nil)
    }

    @Test func userID() throws {
        let measurement = try WeightMeasurement(parsing: [0x04, 0xB0, 0x36, 0x01])
        #expect(measurement.userID == 1)
        #expect(try WeightMeasurement(parsing: [0x04, 0xB0, 0x36, 0xFF]).userID == 0xFF) // unknown user
    }

    @Test func bmiAndHeightSI() throws {
        // BMI E5 00 = 22.9 kg/m²; height D6 06 = 1750 × 0.001 m
        let measurement = try WeightMeasurement(parsing: [0x08, 0xB0, 0x36, 0xE5, 0x00, 0xD6, 0x06])
        #expect(approximately(measurement.bmi, 22.9))
        #expect(approximately(measurement.heightMetres, 1.75))
    }

    @Test func everythingImperial() throws {
        // 0F: imperial, time stamp, user 2, BMI 22.9, height B1 02 = 689 × 0.1 in = 68.9 in
        let value: [UInt8] = [0x0F, 0x48, 0x3C] + SpecBytes.morning + [0x02, 0xE5, 0x00, 0xB1, 0x02]
        let measurement = try WeightMeasurement(parsing: value)
        #expect(measurement.units == .imperial)
        #expect(approximately(measurement.kilograms, 154.32 * Self.kgPerLb))
        #expect(measurement.timeStamp?.year == 2024)
        #expect(measurement.userID == 2)
        #expect(approximately(measurement.bmi, 22.9))
        #expect(approximately(measurement.heightMetres, 68.9 * 0.0254))
    }

    /// All sixteen combinations of the four defined flag bits, each in both unit systems' values.
    @Test(arguments: 0..<16)
    func everyFlagCombination(_ flags: Int) throws {
        let imperial = flags & 1 != 0
        var value: [UInt8] = [UInt8(flags)] + SpecBytes.u16(imperial ? 15432 : 14000)
        if flags & 2 != 0 { value += SpecBytes.morning }
        if flags & 4 != 0 { value += [0x03] }
        if flags & 8 != 0 { value += SpecBytes.u16(229) + SpecBytes.u16(imperial ? 689 : 1750) }
        let measurement = try WeightMeasurement(parsing: value)
        #expect(approximately(measurement.kilograms, imperial ? 154.32 * Self.kgPerLb : 70.0))
        #expect((measurement.timeStamp != nil) == (flags & 2 != 0))
        #expect((measurement.userID == 3) == (flags & 4 != 0))
        #expect((measurement.bmi != nil) == (flags & 8 != 0))
        #expect((measurement.heightMetres != nil) == (flags & 8 != 0))
        // One byte short of what the flags announce is an error, never a trap.
        #expect(throws: StandardScaleParseError.self) { try WeightMeasurement(parsing: Array(value.dropLast())) }
    }

    @Test func reservedFlagBitsAndTrailingBytesAreIgnored() throws {
        #expect(approximately(try WeightMeasurement.parse([0xF0, 0xB0, 0x36])?.kilograms, 70.0))
        #expect(approximately(try WeightMeasurement.parse([0x00, 0xB0, 0x36, 0xAA, 0xBB])?.kilograms, 70.0))
    }

    @Test func measurementUnsuccessfulIsNoReading() throws {
        #expect(try WeightMeasurement.parse([0x00, 0xFF, 0xFF]) == nil)
        #expect(try WeightMeasurement.parse([0x01, 0xFF, 0xFF]) == nil)
        // Time stamp and user ID may still come with an unsuccessful measurement.
        let measurement = try WeightMeasurement(parsing: [0x06, 0xFF, 0xFF] + SpecBytes.morning + [0x01])
        #expect(!measurement.isSuccessful)
        #expect(measurement.kilograms == nil)
        #expect(measurement.userID == 1)
    }

    @Test func truncatedValuesThrowTypedErrors() {
        #expect(throws: StandardScaleParseError.truncated(field: "the flags", needed: 1, available: 0)) {
            try WeightMeasurement.parse([])
        }
        #expect(throws: StandardScaleParseError.truncated(field: "the weight", needed: 2, available: 1)) {
            try WeightMeasurement.parse([0x00, 0xB0])
        }
        #expect(throws: StandardScaleParseError.truncated(field: "the time stamp", needed: 7, available: 1)) {
            try WeightMeasurement.parse([0x02, 0xB0, 0x36, 0xE8])
        }
        #expect(throws: StandardScaleParseError.truncated(field: "the height", needed: 2, available: 0)) {
            try WeightMeasurement.parse([0x08, 0xB0, 0x36, 0xE5, 0x00])
        }
    }

    @Test func everyPrefixOfAFullValueFailsCleanly() {
        let full: [UInt8] = [0x0F, 0x48, 0x3C] + SpecBytes.morning + [0x02, 0xE5, 0x00, 0xB1, 0x02]
        for length in 0..<full.count {
            #expect(throws: StandardScaleParseError.self) { try WeightMeasurement.parse(Array(full.prefix(length))) }
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(state: 0x2A9D)
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? WeightMeasurement.parse(bytes)
        }
    }
}

/// Weight Scale Feature (0x2A9E), WSS 1.0 §3.1.
@Suite struct WeightScaleFeatureTests {
    @Test func everythingAtFinestResolution() throws {
        // bits 0–2 set, weight resolution 7 (0.005 kg / 0.01 lb) at bits 3–6, height 3 (0.001 m / 0.1 in)
        // at bits 7–9: 0x000001BF.
        let feature = try WeightScaleFeature(parsing: [0xBF, 0x01, 0x00, 0x00])
        #expect(feature.timeStampSupported && feature.multipleUsersSupported && feature.bmiSupported)
        #expect(feature.weightResolution == .step(kilograms: 0.005, pounds: 0.01))
        #expect(feature.heightResolution == .step(metres: 0.001, inches: 0.1))
    }

    @Test func nothingSpecified() throws {
        let feature = try WeightScaleFeature(parsing: [0x00, 0x00, 0x00, 0x00])
        #expect(!feature.timeStampSupported && !feature.multipleUsersSupported && !feature.bmiSupported)
        #expect(feature.weightResolution == .notSpecified)
        #expect(feature.heightResolution == .notSpecified)
    }

    @Test(arguments: [(UInt8(1), 0.5, 1.0), (2, 0.2, 0.5), (3, 0.1, 0.2), (4, 0.05, 0.1), (5, 0.02, 0.05), (6, 0.01, 0.02), (7, 0.005, 0.01)])
    func weightResolutionCodes(_ code: UInt8, _ kg: Double, _ lb: Double) {
        #expect(WeightScaleFeature(rawValue: UInt32(code) << 3).weightResolution == .step(kilograms: kg, pounds: lb))
    }

    @Test func reservedCodesAndShortValues() {
        #expect(WeightScaleFeature(rawValue: 8 << 3).weightResolution == .reserved(8))
        #expect(WeightScaleFeature(rawValue: 4 << 7).heightResolution == .reserved(4))
        #expect(WeightScaleFeature(rawValue: 1 << 7).heightResolution == .step(metres: 0.01, inches: 1))
        #expect(throws: StandardScaleParseError.self) { try WeightScaleFeature(parsing: [0xBF, 0x01]) }
    }
}
