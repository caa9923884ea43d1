import TestKit
import HAL
import StandardScale
import Testing

/// Body Composition Measurement (0x2A9C) values, spelled out from BCS 1.0 §3.2 and the GATT
/// Specification Supplement (no public capture of a standards-following analyser was found):
/// flags u16 | body fat u16 (0.1 %) | time stamp (7) | user ID | basal metabolism u16 (kJ) |
/// muscle u16 (0.1 %) | muscle mass | fat free mass | soft lean mass | body water mass |
/// impedance u16 (0.1 Ω) | weight | height. Masses 0.005 kg / 0.01 lb, height 0.001 m / 0.1 in.
@Suite struct BodyCompositionMeasurementTests {
    static let kgPerLb = 0.45359237
    typealias Flags = BodyCompositionMeasurement.Flags

    /// Body fat 21.5 % (D7 00) and every optional field, SI: 30 bytes, the longest possible value.
    static let everythingSI: [UInt8] = [0xFE, 0x0F, 0xD7, 0x00] + SpecBytes.morning + [0x01]
        + SpecBytes.u16(6900)     // basal metabolism 6900 kJ
        + SpecBytes.u16(420)      // muscle 42.0 %
        + SpecBytes.u16(10400)    // muscle mass 52.0 kg
        + SpecBytes.u16(11000)    // fat free mass 55.0 kg
        + SpecBytes.u16(10000)    // soft lean mass 50.0 kg
        + SpecBytes.u16(7700)     // body water mass 38.5 kg
        + SpecBytes.u16(5000)     // impedance 500.0 Ω
        + SpecBytes.u16(14000)    // weight 70.0 kg
        + SpecBytes.u16(1750)     // height 1.750 m

    @Test func longestValueIsThirtyBytes() { #expect(Self.everythingSI.count == 30) }

    @Test func bodyFatOnly() throws {
        let measurement = try BodyCompositionMeasurement(parsing: [0x00, 0x00, 0xD7, 0x00])
        #expect(approximately(measurement.bodyFatPercent, 21.5))
        #expect(measurement.weightKilograms == nil)
        #expect(measurement.reading == nil) // no weight, no reading on its own
    }

    @Test func weightAndImpedanceMakeAReading() throws {
        // flags 0x0600: impedance + weight
        let value: [UInt8] = [0x00, 0x06, 0xD7, 0x00] + SpecBytes.u16(5000) + SpecBytes.u16(14000)
        let reading = try #require(try BodyCompositionMeasurement(parsing: value).reading)
        #expect(approximately(reading.kilograms, 70.0))
        #expect(approximately(reading.impedanceOhms, 500.0))
        #expect(approximately(reading.bodyFatPercent, 21.5))
        #expect(reading.stable == nil)
        #expect(reading.displayUnit == .kilograms)
    }

    @Test func everyFieldSI() throws {
        let m = try BodyCompositionMeasurement(parsing: Self.everythingSI)
        #expect(m.units == .si)
        #expect(!m.isMultiplePacket)
        #expect(approximately(m.bodyFatPercent, 21.5))
        #expect(m.timeStamp == BluetoothDateTime(year: 2024, month: 3, day: 15, hours: 7, minutes: 30, seconds: 0))
        #expect(m.userID == 1)
        #expect(approximately(m.basalMetabolismKilojoules, 6900))
        #expect(approximately(m.musclePercent, 42.0))
        #expect(approximately(m.muscleMassKilograms, 52.0))
        #expect(approximately(m.fatFreeMassKilograms, 55.0))
        #expect(approximately(m.softLeanMassKilograms, 50.0))
        #expect(approximately(m.bodyWaterMassKilograms, 38.5))
        #expect(approximately(m.impedanceOhms, 500.0))
        #expect(approximately(m.weightKilograms, 70.0))
        #expect(approximately(m.heightMetres, 1.75))
    }

    @Test func everyFieldImperial() throws {
        // flags 0x0FFF: imperial; masses in 0.01 lb, height in 0.1 in.
        let value: [UInt8] = [0xFF, 0x0F, 0xD7, 0x00] + SpecBytes.morning + [0x01]
            + SpecBytes.u16(6900) + SpecBytes.u16(420)
            + SpecBytes.u16(11464)   // muscle mass 114.64 lb
            + SpecBytes.u16(12125)   // fat free mass 121.25 lb
            + SpecBytes.u16(11023)   // soft lean mass 110.23 lb
            + SpecBytes.u16(8488)    // body water mass 84.88 lb
            + SpecBytes.u16(5000)
            + SpecBytes.u16(15432)   // weight 154.32 lb
            + SpecBytes.u16(689)     // height 68.9 in
        let m = try BodyCompositionMeasurement(parsing: value)
        #expect(m.units == .imperial)
        #expect(approximately(m.muscleMassKilograms, 114.64 * Self.kgPerLb))
        #expect(approximately(m.fatFreeMassKilograms, 121.25 * Self.kgPerLb))
        #expect(approximately(m.softLeanMassKilograms, 110.23 * Self.kgPerLb))
        #expect(approximately(m.bodyWaterMassKilograms, 84.88 * Self.kgPerLb))
        #expect(approximately(m.weightKilograms, 154.32 * Self.kgPerLb))
        #expect(approximately(m.heightMetres, 68.9 * 0.0254))
        // Non-mass fields do not depend on the units.
        #expect(approximately(m.impedanceOhms, 500.0))
        #expect(approximately(m.musclePercent, 42.0))
        #expect(m.reading?.displayUnit == .pounds)
    }

    /// Each optional field on its own (flag bits 1–11), so a field read at the wrong offset shows.
    @Test(arguments: 1...11)
    func eachOptionalFieldAlone(_ bit: Int) throws {
        let field: [UInt8] = switch bit {
        case 1: SpecBytes.morning
        case 2: [0x07]
        default: SpecBytes.u16(1000)
        }
        let value = SpecBytes.u16(UInt16(1) << UInt16(bit)) + [0xD7, 0x00] + field
        let m = try BodyCompositionMeasurement(parsing: value)
        #expect(approximately(m.bodyFatPercent, 21.5))
        let present: [Bool] = [m.timeStamp != nil, m.userID != nil, m.basalMetabolismKilojoules != nil,
                               m.musclePercent != nil, m.muscleMassKilograms != nil, m.fatFreeMassKilograms != nil,
                               m.softLeanMassKilograms != nil, m.bodyWaterMassKilograms != nil, m.impedanceOhms != nil,
                               m.weightKilograms != nil, m.heightMetres != nil]
        #expect(present == (1...11).map { $0 == bit })
        let values: [Double?] = [nil, nil, m.basalMetabolismKilojoules, m.musclePercent, m.muscleMassKilograms,
                                 m.fatFreeMassKilograms, m.softLeanMassKilograms, m.bodyWaterMassKilograms,
                                 m.impedanceOhms, m.weightKilograms, m.heightMetres]
        let expected: [Double?] = [nil, nil, 1000, 100, 5, 5, 5, 5, 100, 5, 1]
        if let got = values[bit - 1], let want = expected[bit - 1] { #expect(approximately(got, want)) }
        #expect(throws: StandardScaleParseError.self) { try BodyCompositionMeasurement(parsing: Array(value.dropLast())) }
    }

    /// Every combination of the eleven field bits, SI and imperial: each parses in full and one
    /// byte fewer throws.
    @Test func everyFlagCombination() throws {
        for fieldBits in 0..<(1 << 11) {
            for imperial in [false, true] {
                let flags = UInt16(fieldBits) << 1 | (imperial ? 1 : 0)
                var value = SpecBytes.u16(flags) + [0xD7, 0x00]
                for bit in 1...11 where flags & (1 << bit) != 0 {
                    value += bit == 1 ? SpecBytes.morning : bit == 2 ? [0x09] : SpecBytes.u16(UInt16(bit) * 100)
                }
                let m = try BodyCompositionMeasurement(parsing: value)
                #expect(m.flags.rawValue == flags)
                #expect((m.weightKilograms != nil) == (flags & 0x0400 != 0))
                if let weight = m.weightKilograms {
                    #expect(approximately(weight, imperial ? 10 * Self.kgPerLb : 5.0))
                }
                #expect((m.heightMetres != nil) == (flags & 0x0800 != 0))
                if flags & 0x0FFE != 0 {
                    #expect(throws: StandardScaleParseError.self) { try BodyCompositionMeasurement(parsing: Array(value.dropLast())) }
                }
            }
        }
    }

    @Test func measurementUnsuccessful() throws {
        // Body fat FF FF; time stamp and user ID may still be sent.
        let m = try BodyCompositionMeasurement(parsing: [0x06, 0x00, 0xFF, 0xFF] + SpecBytes.morning + [0x01])
        #expect(!m.isSuccessful)
        #expect(m.bodyFatPercent == nil)
        #expect(m.reading == nil)
        #expect(m.userID == 1)
    }

    @Test func truncatedValuesThrow() {
        #expect(throws: StandardScaleParseError.truncated(field: "the flags", needed: 2, available: 1)) {
            try BodyCompositionMeasurement(parsing: [0x00])
        }
        #expect(throws: StandardScaleParseError.truncated(field: "the body fat percentage", needed: 2, available: 0)) {
            try BodyCompositionMeasurement(parsing: [0x00, 0x04])
        }
        for length in 0..<Self.everythingSI.count {
            #expect(throws: StandardScaleParseError.self) { try BodyCompositionMeasurement(parsing: Array(Self.everythingSI.prefix(length))) }
        }
    }

    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(state: 0x2A9C)
        var assembler = BodyCompositionAssembler()
        for _ in 0..<5000 {
            let bytes = (0..<Int.random(in: 0...32, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? BodyCompositionMeasurement(parsing: bytes)
            _ = try? assembler.add(bytes)
        }
    }
}

/// Body Composition Feature (0x2A9B), BCS 1.0 §3.1.
@Suite struct BodyCompositionFeatureTests {
    @Test func everythingAtFinestResolution() throws {
        // bits 0–10 set, mass resolution 7 at bits 11–14, height resolution 3 at bits 15–17: 0x0001BFFF.
        let feature = try BodyCompositionFeature(parsing: [0xFF, 0xBF, 0x01, 0x00])
        #expect(feature.timeStampSupported && feature.multipleUsersSupported && feature.basalMetabolismSupported)
        #expect(feature.musclePercentageSupported && feature.muscleMassSupported && feature.fatFreeMassSupported)
        #expect(feature.softLeanMassSupported && feature.bodyWaterMassSupported && feature.impedanceSupported)
        #expect(feature.weightSupported && feature.heightSupported)
        #expect(feature.massResolution == .step(kilograms: 0.005, pounds: 0.01))
        #expect(feature.heightResolution == .step(metres: 0.001, inches: 0.1))
    }

    @Test func impedanceAndWeightOnlyAtHalfKilogram() throws {
        // bits 8 and 9, mass resolution 1 (0.5 kg / 1 lb): 0x00000B00.
        let feature = try BodyCompositionFeature(parsing: [0x00, 0x0B, 0x00, 0x00])
        #expect(feature.impedanceSupported && feature.weightSupported)
        #expect(!feature.heightSupported && !feature.timeStampSupported)
        #expect(feature.massResolution == .step(kilograms: 0.5, pounds: 1))
        #expect(feature.heightResolution == .notSpecified)
        #expect(throws: StandardScaleParseError.self) { try BodyCompositionFeature(parsing: [0x00, 0x0B, 0x00]) }
    }
}
