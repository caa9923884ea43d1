import HAL
import HALFakes
import SerialTestSupport
import StandardScale
import Testing
import Transports
@testable import Peripherals
import VirtualController

/// A scale's controls pressed while a central is connected through the virtual controller, as a
/// `serve` screen's keys would: the standard-scale driver on our host stack sees nothing until the
/// person steps on, then each settling reading, and a new weight settles again.
@Suite struct ScaleControlsOverControllerTests {
    static let address = BLEAddress(string: "D4:12:3A:00:18:1D")!

    @Test func stepOnSetWeightAndStepOffReachTheDriverOnTheControllersTimeline() async throws {
        let clock = ManualClock()
        let scale = GATTScalePeripheral(StandardScaleDevice(measuresBodyComposition: true), weightKilograms: 64.2, composition: .bench,
                                        address: Self.address, arrival: .manual)
        let controller = VirtualController(peripherals: [scale], clock: clock)
        typealias Scale = GATTScalePeripheral<StandardScaleDevice>
        let outcome = await drive(clock) { () -> Result<[String], any Error> in
            do {
                let central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock)
                let transport = BLEScaleTransport(central: central, registry: DriverRegistry(drivers: [StandardScaleDriver()]), clock: clock)
                var found: DiscoveredDevice?
                for try await seen in transport.discover() where seen.address == Self.address {
                    found = seen
                    break
                }
                let connection = try await transport.connect(to: try #require(found))
                let start = clock.now
                var seen: [String] = []
                var events = connection.events.makeAsyncIterator()
                // Nobody on the scale: five quiet seconds.
                try await clock.sleep(for: .seconds(5))
                #expect(controller.updatePeripheral(Self.address, as: Scale.self) { $0.stepOn() })
                #expect(!controller.updatePeripheral(Self.address, as: GATTScalePeripheral<QNScaleDevice>.self) { $0.stepOff() },
                        "a peripheral of another type is not changed")
                func describe(_ event: ScaleEvent?) -> String {
                    guard case .weight(let reading)? = event else { return "\(String(describing: event))" }
                    let fat = reading.bodyFatPercent.map { " fat \(Int(($0 * 10).rounded()))" } ?? ""
                    return "\(start.duration(to: clock.now) / .milliseconds(1)) ms \(Int((reading.kilograms * 100).rounded()))\(fat)"
                }
                for _ in 0..<4 { seen.append(describe(await events.next())) }
                controller.updatePeripheral(Self.address, as: Scale.self) { $0.setWeight(64.5) }
                for _ in 0..<4 { seen.append(describe(await events.next())) }
                controller.updatePeripheral(Self.address, as: Scale.self) { $0.stepOff() }
                try await clock.sleep(for: .seconds(3))
                #expect(controller.peripheral(Self.address, as: Scale.self)?.isOccupied == false)
                await connection.disconnect()
                await central.close()
                return .success(seen)
            } catch {
                return .failure(error)
            }
        }
        let seen = try #require(outcome).get()
        // Three weights 300, 700 and 1100 ms after the key; the body composition with the last
        // (its own weight makes a fourth reading); the same again after the new weight.
        #expect(seen == ["5300.0 ms 6375", "5700.0 ms 6420", "6100.0 ms 6420", "6100.0 ms 6420 fat 214",
                         "6400.0 ms 6405", "6800.0 ms 6450", "7200.0 ms 6450", "7200.0 ms 6450 fat 214"], "\(seen)")
    }
}
