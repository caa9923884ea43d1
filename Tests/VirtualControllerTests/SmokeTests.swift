import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController

@Suite struct SmokeTests {
    @Test func theHostFindsConnectsAndDiscoversTheMirror() async throws {
        let clock = ManualClock()
        let controller = VirtualController(peripherals: [MirrorPeripheral()], clock: clock)
        let outcome = await drive(clock) { () -> String in
            do {
                let central = try await BLECentral.open(stream: controller, uri: .simulatedBench, clock: clock)
                var found: DiscoveredDevice?
                for try await device in central.discover() where device.name != nil {
                    found = device
                    break
                }
                guard let found else { return "nothing found" }
                let connection = try await central.connect(found.address)
                let mtu = try await connection.bearer.exchangeMTU(247)
                let trees = try await connection.gatt.discoverAll()
                await connection.disconnect()
                await central.close()
                return "\(found.name ?? "") \(mtu) \(trees.map { $0.service.uuid.description })"
            } catch {
                return "error: \(error)"
            }
        }
        #expect(outcome == "Mirror 4F2A 247 [\"1800\", \"1801\", \"7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00\"]")
    }
}
