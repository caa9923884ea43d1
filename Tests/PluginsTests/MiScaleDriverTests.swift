import TestKit
import HAL
import MiScale
import Testing

/// Xiaomi broadcast frames. "Captured" frames are real advertisements posted in public issues;
/// "derived" frames change only the control bits of a captured one, for the cases no public
/// capture shows (pounds, jin); each says which.
@Suite struct MiScaleDriverTests {
    let driver = MiScaleDriver()
    static let kgPerLb = 0.45359237

    func bodyScale(_ data: [UInt8]) -> WeightReading? {
        driver.reading(from: Advertisement(localName: "MIBFS", serviceData: [BluetoothUUID(0x181B): data]))
    }

    func smartScale(_ data: [UInt8]) -> WeightReading? {
        driver.reading(from: Advertisement(localName: "MI SCALE2", serviceData: [BluetoothUUID(0x181D): data]))
    }

    // MARK: Mi Body Composition Scale 2 (0x181B, 13 bytes)

    /// Captured: lolouk44/hassio-addons issue #14 (2020-09-06), service data
    /// `1b18 02a6e40709060d2614e9015a37`, logged there as 70.85 kg, 489 Ω.
    static let capturedWithImpedance: [UInt8] = [0x02, 0xA6, 0xE4, 0x07, 0x09, 0x06, 0x0D, 0x26, 0x14, 0xE9, 0x01, 0x5A, 0x37]

    @Test func capturedStableFrameWithImpedanceAfterSteppingOff() throws {
        let reading = try #require(bodyScale(Self.capturedWithImpedance))
        #expect(approximately(reading.kilograms, 70.85))
        #expect(reading.displayUnit == .kilograms)
        #expect(reading.stable == true)
        #expect(reading.loadRemoved) // control byte 1 = 0xA6: bit 7 set
        #expect(reading.impedanceOhms == 489)
        #expect(reading.bodyFatPercent == nil)
    }

    @Test func catalogFrameStableWhileStanding() throws {
        // The frame of DriverCatalogTests: control 02 26 (stable, impedance, still loaded).
        let reading = try #require(bodyScale([0x02, 0x26, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05, 0xF4, 0x01, 0x5C, 0x38]))
        #expect(approximately(reading.kilograms, 72.14))
        #expect(reading.stable == true)
        #expect(!reading.loadRemoved)
        #expect(reading.impedanceOhms == 500)
    }

    @Test func capturedUnstableFrameWithoutImpedance() throws {
        // Captured: AlCalzone/ioBroker.ble issue #148, `0204e30707031216330000f81b`: control 02 04 —
        // not stable, no impedance, loaded. (The poster's "19,8 kg" note matches no reading of
        // these bytes; only the flags and the /200 arithmetic are checked.)
        let reading = try #require(bodyScale([0x02, 0x04, 0xE3, 0x07, 0x07, 0x03, 0x12, 0x16, 0x33, 0x00, 0x00, 0xF8, 0x1B]))
        #expect(reading.stable == false)
        #expect(!reading.loadRemoved)
        #expect(reading.impedanceOhms == nil)
        #expect(approximately(reading.kilograms, Double(0x1BF8) / 200))
    }

    @Test func poundsOnTheBodyScale() throws {
        // Derived: the captured frame with control byte 0 bit 0 set (03) and 156.20 lb (0x3D04).
        var frame = Self.capturedWithImpedance
        frame[0] = 0x03
        frame[11] = 0x04; frame[12] = 0x3D
        let reading = try #require(bodyScale(frame))
        #expect(reading.displayUnit == .pounds)
        #expect(approximately(reading.kilograms, 156.20 * Self.kgPerLb))
    }

    @Test func jinOnTheBodyScale() throws {
        // Derived: control byte 1 bit 6 (openScale's catty bit; see MiScaleFrame for the disagreement),
        // 141.70 jin (0x375A / 100) = 70.85 kg.
        var frame = Self.capturedWithImpedance
        frame[1] = 0x66
        let reading = try #require(bodyScale(frame))
        #expect(reading.displayUnit == .jin)
        #expect(approximately(reading.kilograms, 70.85))
        #expect(reading.stable == true && !reading.loadRemoved)
    }

    @Test func impedanceFlagWithoutAValueOrWithASentinelIsNoImpedance() throws {
        var frame = Self.capturedWithImpedance
        frame[9] = 0; frame[10] = 0
        #expect(try #require(bodyScale(frame)).impedanceOhms == nil)
        frame[9] = 0xFE; frame[10] = 0xFF
        #expect(try #require(bodyScale(frame)).impedanceOhms == nil)
        // Bit 1 clear: the impedance bytes are not read even when they hold a value.
        frame = Self.capturedWithImpedance
        frame[1] = 0xA4
        #expect(try #require(bodyScale(frame)).impedanceOhms == nil)
    }

    @Test func overloadIsNoReading() {
        var frame = Self.capturedWithImpedance
        frame[11] = 0xFF; frame[12] = 0xFF
        #expect(bodyScale(frame) == nil)
    }

    // MARK: Mi Smart Scale 2 (0x181D, 10 bytes)

    @Test func capturedStableFramesAfterSteppingOff() throws {
        // Captured: sputnikdev/eclipse-smarthome-bluetooth-binding issue #42, reported as 127.100,
        // 126.700 and 3.200 kg; control A2 = stable (bit 5) and load removed (bit 7).
        let frames: [([UInt8], Double)] = [
            ([0xA2, 0x4C, 0x63, 0xE2, 0x07, 0x02, 0x01, 0x0F, 0x2F, 0x1C], 127.1),
            ([0xA2, 0xFC, 0x62, 0xE2, 0x07, 0x02, 0x01, 0x0F, 0x31, 0x00], 126.7),
            ([0xA2, 0x80, 0x02, 0xE2, 0x07, 0x02, 0x01, 0x0F, 0x35, 0x04], 3.2),
        ]
        for (frame, kilograms) in frames {
            let reading = try #require(smartScale(frame))
            #expect(approximately(reading.kilograms, kilograms))
            #expect(reading.stable == true)
            #expect(reading.loadRemoved)
            #expect(reading.displayUnit == .kilograms)
            #expect(reading.impedanceOhms == nil)
        }
    }

    @Test func capturedUnstableFrames() throws {
        // Captured: custom-components/ble_monitor issue #292 (2021-04-12), service data after `1d18`:
        // control 02 = kilograms, still settling, loaded.
        let frames: [([UInt8], Double)] = [
            ([0x02, 0xDE, 0x03, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x3A], 4.95),
            ([0x02, 0xF8, 0x43, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x3B], 87.0),
            ([0x02, 0x52, 0x44, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x3B], 87.45),
        ]
        for (frame, kilograms) in frames {
            let reading = try #require(smartScale(frame))
            #expect(approximately(reading.kilograms, kilograms))
            #expect(reading.stable == false)
            #expect(!reading.loadRemoved)
        }
    }

    @Test func stableWhileStanding() throws {
        // The frame of DriverCatalogTests: control 22.
        let reading = try #require(smartScale([0x22, 0x5C, 0x38, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05]))
        #expect(approximately(reading.kilograms, 72.14))
        #expect(reading.stable == true && !reading.loadRemoved)
    }

    @Test func poundsAndJinOnTheSmartScale() throws {
        // Derived from the catalog frame: 0x385C = 14428 → 144.28 lb (control 23) or 144.28 jin (control 32).
        let pounds = try #require(smartScale([0x23, 0x5C, 0x38, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05]))
        #expect(pounds.displayUnit == .pounds)
        #expect(approximately(pounds.kilograms, 144.28 * Self.kgPerLb))
        let jin = try #require(smartScale([0x32, 0x5C, 0x38, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05]))
        #expect(jin.displayUnit == .jin)
        #expect(approximately(jin.kilograms, 72.14))
        #expect(jin.stable == true)
    }

    // MARK: What is not a Mi reading

    @Test func wrongLengthsAreNil() {
        for length in [0, 1, 9, 11, 12, 14, 20, 26] {
            let bytes = [UInt8](repeating: 0x22, count: length)
            if length != 10 { #expect(smartScale(bytes) == nil) }
            if length != 13 { #expect(bodyScale(bytes) == nil) }
        }
        // The 10-byte layout under 0x181B and the 13-byte one under 0x181D are not readings either.
        #expect(bodyScale([0x22, 0x5C, 0x38, 0xE5, 0x07, 0x0B, 0x1D, 0x0E, 0x1F, 0x05]) == nil)
        #expect(smartScale(Self.capturedWithImpedance) == nil)
        #expect(driver.reading(from: Advertisement(localName: "MIBFS")) == nil)
        #expect(driver.reading(from: Advertisement(serviceData: [BluetoothUUID(0x180F): Self.capturedWithImpedance])) == nil)
    }

    @Test func randomServiceDataNeverCrashes() {
        var rng = SplitMix64(state: 0x181B)
        for _ in 0..<2000 {
            let length = [10, 13, Int.random(in: 0...31, using: &rng)].randomElement(using: &rng) ?? 0
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = bodyScale(bytes)
            _ = smartScale(bytes)
        }
    }

    @Test func frameKeepsTheModel() throws {
        #expect(MiScaleFrame(bodyCompositionServiceData: Self.capturedWithImpedance)?.model == .bodyCompositionScale2)
        #expect(MiScaleFrame(weightScaleServiceData: [0x22, 0x5C, 0x38, 0, 0, 0, 0, 0, 0, 0])?.model == .smartScale2)
        #expect(MiScaleFrame(weightScaleServiceData: [0x22]) == nil)
    }
}
