import HAL
import StandardScale
import Testing

/// Multi-packet Body Composition measurements (BCS 1.0: bit 12 set in every part, each part
/// starting with Flags and Body Fat, the flags of each naming only its own fields). The split
/// below is what an analyser does at the default ATT_MTU of 23 (20-byte values) with the
/// 30-byte measurement of `BodyCompositionMeasurementTests.everythingSI`.
@Suite struct BodyCompositionAssemblerTests {
    /// Part 1, flags 0x107E: multi-packet, time stamp, user, basal metabolism, muscle %,
    /// muscle mass, fat free mass — exactly 20 bytes.
    static let firstPart: [UInt8] = [0x7E, 0x10, 0xD7, 0x00] + SpecBytes.morning + [0x01]
        + SpecBytes.u16(6900) + SpecBytes.u16(420) + SpecBytes.u16(10400) + SpecBytes.u16(11000)
    /// Part 2, flags 0x1F80: multi-packet, soft lean mass, body water, impedance, weight, height.
    static let secondPart: [UInt8] = [0x80, 0x1F, 0xD7, 0x00]
        + SpecBytes.u16(10000) + SpecBytes.u16(7700) + SpecBytes.u16(5000) + SpecBytes.u16(14000) + SpecBytes.u16(1750)

    @Test func partsFitTheDefaultMTU() {
        #expect(Self.firstPart.count == 20)
        #expect(Self.secondPart.count <= 20)
    }

    @Test func twoPacketMeasurementIsAssembled() throws {
        var assembler = BodyCompositionAssembler()
        #expect(try assembler.add(Self.firstPart) == nil)
        #expect(assembler.pendingParts == 1)
        let whole = try #require(try assembler.add(Self.secondPart))
        #expect(assembler.pendingParts == 0)
        #expect(!whole.isMultiplePacket)
        // The assembled measurement equals the same measurement sent in one piece.
        #expect(whole == (try BodyCompositionMeasurement(parsing: BodyCompositionMeasurementTests.everythingSI)))
        let reading = try #require(whole.reading)
        #expect(approximately(reading.kilograms, 70.0))
        #expect(approximately(reading.impedanceOhms, 500.0))
        #expect(approximately(reading.bodyFatPercent, 21.5))
    }

    @Test func singlePacketValuesPassStraightThrough() throws {
        var assembler = BodyCompositionAssembler()
        let whole = try #require(try assembler.add(BodyCompositionMeasurementTests.everythingSI))
        #expect(approximately(whole.weightKilograms, 70.0))
        #expect(assembler.droppedParts == 0)
    }

    @Test func aLostSecondPartDropsTheFirst() throws {
        var assembler = BodyCompositionAssembler()
        #expect(try assembler.add(Self.firstPart) == nil)
        // A new first part (it repeats fields already collected) starts a new measurement.
        #expect(try assembler.add(Self.firstPart) == nil)
        #expect(assembler.droppedParts == 1)
        #expect(try assembler.add(Self.secondPart) != nil)
        // A single-packet value while a part waits: the part is dropped, the value is returned.
        #expect(try assembler.add(Self.firstPart) == nil)
        #expect(try assembler.add(BodyCompositionMeasurementTests.everythingSI) != nil)
        #expect(assembler.droppedParts == 2)
    }

    @Test func partsInDifferentUnitsDoNotCombine() throws {
        var assembler = BodyCompositionAssembler()
        var imperialSecond = Self.secondPart
        imperialSecond[0] |= 0x01
        #expect(try assembler.add(Self.firstPart) == nil)
        #expect(try assembler.add(imperialSecond) == nil)
        #expect(assembler.droppedParts == 1)
        #expect(assembler.pendingParts == 1)
    }

    @Test func aMalformedPartAbandonsTheMeasurement() throws {
        var assembler = BodyCompositionAssembler()
        #expect(try assembler.add(Self.firstPart) == nil)
        #expect(throws: StandardScaleParseError.self) { try assembler.add(Array(Self.secondPart.dropLast())) }
        #expect(assembler.pendingParts == 0)
        #expect(assembler.droppedParts == 1)
        // The second part alone is now the start of a measurement, not the end of one.
        #expect(try assembler.add(Self.secondPart) == nil)
    }

    @Test func resetForgetsAPartialMeasurement() throws {
        var assembler = BodyCompositionAssembler()
        _ = try assembler.add(Self.firstPart)
        assembler.reset()
        #expect(assembler.pendingParts == 0)
        #expect(try assembler.add(Self.secondPart) == nil)
    }
}

/// How the driver turns indications from both services into readings.
@Suite struct StandardScaleReadingCombinerTests {
    @Test func weightMeasurementsBecomeReadings() {
        var combiner = StandardScaleReadingCombiner()
        #expect(approximately(combiner.weightMeasurement([0x00, 0xB0, 0x36])?.kilograms, 70.0))
        #expect(combiner.weightMeasurement([0x00, 0xFF, 0xFF]) == nil)
        #expect(combiner.unsuccessfulMeasurements == 1)
        #expect(combiner.weightMeasurement([0x08, 0xB0, 0x36]) == nil) // BMI announced, missing
        #expect(combiner.malformedValues == 1)
    }

    @Test func compositionWithoutWeightJoinsTheNextWeight() throws {
        var combiner = StandardScaleReadingCombiner()
        // Body fat 21.5 % and impedance 500 Ω, no weight (flags 0x0200).
        #expect(combiner.bodyCompositionMeasurement([0x00, 0x02, 0xD7, 0x00] + SpecBytes.u16(5000)) == nil)
        let combined = combiner.weightMeasurement([0x00, 0xB0, 0x36])
        let reading = try #require(combined)
        #expect(approximately(reading.bodyFatPercent, 21.5))
        #expect(approximately(reading.impedanceOhms, 500))
        // Used once only.
        #expect(combiner.weightMeasurement([0x00, 0xB0, 0x36])?.bodyFatPercent == nil)
    }

    @Test func compositionWithWeightIsAReadingByItself() throws {
        var combiner = StandardScaleReadingCombiner()
        #expect(combiner.bodyCompositionMeasurement(BodyCompositionAssemblerTests.firstPart) == nil)
        let completed = combiner.bodyCompositionMeasurement(BodyCompositionAssemblerTests.secondPart)
        let reading = try #require(completed)
        #expect(approximately(reading.kilograms, 70.0))
        #expect(approximately(reading.bodyFatPercent, 21.5))
    }

    @Test func malformedAndUnsuccessfulCompositionIsSkipped() {
        var combiner = StandardScaleReadingCombiner()
        #expect(combiner.bodyCompositionMeasurement([0x00]) == nil)
        #expect(combiner.bodyCompositionMeasurement([0x00, 0x04, 0xFF, 0xFF, 0xB0, 0x36]) == nil)
        #expect(combiner.malformedValues == 1)
        #expect(combiner.unsuccessfulMeasurements == 1)
    }
}
