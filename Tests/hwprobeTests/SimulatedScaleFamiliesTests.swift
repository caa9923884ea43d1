import Foundation
import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController
@testable import hwprobe

/// Every scale family on the simulated bench (`sim:?scale=ID`): `weigh` through our host stack and
/// the driver that claims it reads exactly the weight the bench's person has, and the families
/// that carry body composition bring it through their driver. The driver and the virtual scale are
/// two implementations of each protocol, both from the public sources their files cite.
@Suite struct SimulatedScaleFamiliesTests {
    static let families = ScalePeripherals.driverIDs
    static let address = "D4:12:3A:00:18:1D"

    /// What the family's display shows for `kilograms`: ICOMON's result is in tenths (72.35 is
    /// 72.3499… in binary, so it shows 72.3); the rest carry 0.05 kg or finer (the standard and
    /// Beurer scales' step), so the bench's 72.35 holds.
    static func shown(_ kilograms: Double, by family: String) -> Double {
        family == "icomon-mgb" ? (kilograms / 0.1).rounded() / 10 : kilograms
    }

    func weigh(_ uri: String, clock: ManualClock) async -> (code: Int32?, json: [String: JSONShape]?, stderr: String) {
        let captured = CapturedConsole()
        var configured = HWProbe(console: captured.console, listSources: .empty)
        configured.bench = SimulatedBench(clock: clock)
        let cli = configured
        let code = await drive(clock) { await cli.run(["weigh", "--hci", uri, "--json"]) }
        return (code, try? JSONShape.parse(captured.stdout), captured.stderr)
    }

    @Test(arguments: families)
    func weighReadsTheBenchPersonsWeightFromEachFamily(_ family: String) async throws {
        for weight in [SimulatedBench.weightKilograms, 81.3] {
            let uri = weight == SimulatedBench.weightKilograms ? "sim:?scale=\(family)" : "sim:?scale=\(family)&weight=\(weight)"
            let clock = ManualClock()
            let (code, json, stderr) = await weigh(uri, clock: clock)
            #expect(code == 0, "\(uri): \(stderr.suffix(600))")
            #expect(json?["weightKg"]?.number == Self.shown(weight, by: family), "\(uri)")
            #expect(json?["driver"]?.string == family, "\(uri): claimed by its own driver")
            #expect(json?["address"]?.string == Self.address)
            #expect(json?["stable"] == .number(1) || json?["stable"] == .bool(true))
            // Found at 250 ms (a broadcaster a reading later), settled 1.1 s after the person
            // stepped on: a few seconds of bench time at most.
            #expect(clock.now.offset < .seconds(3), "\(uri): \(clock.now.offset)")
        }
    }

    @Test func everyFamilyIsAScaleDriversAndEveryScaleDriverHasAFamily() {
        let scaleDrivers = Set(DriverRegistry.linked.drivers.map(\.descriptor).filter { $0.kind == .scale }.map(\.id))
        #expect(Set(Self.families) == scaleDrivers)
        #expect(Self.families.allSatisfy { ScalePeripherals.make(driverID: $0, weightKilograms: 70, address: BLEAddress(string: "01:02:03:04:05:06")!) != nil })
        #expect(ScalePeripherals.make(driverID: "mirror-v1", weightKilograms: 70, address: BLEAddress(string: "01:02:03:04:05:06")!) == nil)
    }

    struct Composition: Sendable, CustomTestStringConvertible {
        var family: String
        var fat: Double?
        var impedance: Double?
        var testDescription: String { family }
    }

    /// What each driver makes of the bench person's body composition (21.4 % fat, 512 Ω): the
    /// families whose frames carry it, as far as each driver reads it.
    @Test(arguments: [
        Composition(family: "standard-scale", fat: 21.4, impedance: 512),
        Composition(family: "yunmai", fat: 21.4, impedance: nil),
        Composition(family: "icomon-mgb", fat: 21.4, impedance: nil),
        Composition(family: "onebyone-eufy", fat: nil, impedance: 512),
        Composition(family: "mi-scale", fat: nil, impedance: 512),
        Composition(family: "qn-scale", fat: nil, impedance: nil),
    ])
    func driversReadTheBodyCompositionTheirFamilySends(_ expected: Composition) async throws {
        let clock = ManualClock()
        let bench = try SimulatedBench(clock: clock).configured(for: DeviceURI(parsing: "sim:?scale=\(expected.family)"))
        let outcome = await drive(clock) { () -> Result<WeightReading?, any Error> in
            do {
                let central = try await bench.central()
                let transport = BLEScaleTransport(central: central, registry: DriverRegistry.linked, clock: clock)
                var found: DiscoveredDevice?
                for try await seen in transport.discover() where seen.address.description == Self.address
                    && DriverRegistry.linked.claim(.advertisement(seen.advertisement)) != nil {
                    found = seen
                    break
                }
                let connection = try await transport.connect(to: try #require(found))
                var last: WeightReading?
                for await event in connection.events {
                    guard case .weight(let reading) = event else { break }
                    last = reading
                    // The composition comes with (or right after) the final weight.
                    if reading.bodyFatPercent != nil || reading.impedanceOhms != nil || (reading.stable == true && expected.fat == nil && expected.impedance == nil) {
                        break
                    }
                }
                await connection.disconnect()
                await central.close()
                return .success(last)
            } catch {
                return .failure(error)
            }
        }
        let result = try #require(outcome)
        let reading = try #require(try result.get())
        #expect(abs(reading.kilograms - Self.shown(SimulatedBench.weightKilograms, by: expected.family)) < 0.001)
        #expect(reading.bodyFatPercent.map { ($0 * 10).rounded() / 10 } == expected.fat)
        #expect(reading.impedanceOhms.map { $0.rounded() } == expected.impedance)
    }

    /// The real binary, as a person types it: each family end to end in its own process, the
    /// bench running 20 times faster than life.
    @Test func theBinaryWeighsEveryFamilyOnTheBench() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["HWPROBE_SIM_SPEED"] = "20"
        for family in Self.families {
            let result = try ShellRun.run(hwprobeBinary(), ["weigh", "--hci", "sim:?scale=\(family)&weight=64.8", "--json"], environment: environment)
            #expect(result.code == 0, "\(family): \(result.err.suffix(400))")
            let json = try JSONShape.parse(result.out)
            #expect(json["weightKg"]?.number == 64.8 && json["driver"]?.string == family, "\(family): \(result.out)")
        }
    }

    @Test func theScaleOptionsAreCheckedAndSayWhatTheyTake() {
        for (options, words) in [(["scale": "tanita"], "one of standard-scale, qn-scale, qn-broadcast, yunmai"),
                                 (["weight": "900"], "0.5 to 300"), (["weight": "heavy"], "weight=heavy"),
                                 (["scale": "qn-scale", "weight": "0.1"], "0.5 to 300")] {
            do {
                _ = try SimulatedScenario(options: options)
                Issue.record("accepted \(options)")
            } catch {
                #expect(error.kind == .usage)
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
        let scenario = try? SimulatedScenario(options: ["scale": "mi-scale", "weight": "80.5"])
        #expect(scenario?.scale == "mi-scale" && scenario?.weightKilograms == 80.5)
        // The default bench's scale is still the standard one it always was.
        #expect(SimulatedBench(clock: ManualClock()).scalePeripheral() is StandardScalePeripheral)
    }
}
