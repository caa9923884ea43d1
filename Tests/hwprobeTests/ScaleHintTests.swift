import Foundation
import HAL
import HALFakes
import Testing
@testable import hwprobe

/// Issue 18, item 4: a device that looks like a scale but that no driver reads is listed as a
/// scale with `"driver": null` and a hint naming the family it resembles.
@Suite struct ScaleHintTests {
    let list = ListCommand(registry: DriverRegistry.linked, sources: .empty,
                           transports: TransportFactory(bench: SimulatedBench(clock: ManualClock())))

    func device(_ name: String?, services: [UInt16], manufacturer: [UInt16: [UInt8]] = [:]) -> DiscoveredDevice {
        DiscoveredDevice(address: BLEAddress(bytes: [0xC0, 0x11, 0x22, 0x33, 0x44, 0x55])!, rssi: -60,
                         advertisement: Advertisement(localName: name, serviceUUIDs: services.map(BluetoothUUID.init),
                                                      manufacturerData: manufacturer))
    }

    @Test func anUnreadFFB0ScaleIsAScaleWithANullDriverAndAHint() throws {
        let entry = list.peripheral(device("AE BS-06", services: [0xFFB0]), hci: "tcp:127.0.0.1:1")
        #expect(entry.driver == nil)
        #expect(entry.kind == "scale")
        let hint = try #require(entry.hint)
        #expect(hint.hasPrefix("looks like a scale of the LeFu / ICOMON family (service FFB0)"), "\(hint)")
        let json = try JSONShape.parse(JSON.encode(entry))
        #expect(json["driver"] == .null, "the key is there, and null")
        #expect(json["hint"]?.string == hint)
        #expect(ListTable.claim(entry).hasPrefix("scale, no driver: looks like a scale of the LeFu"))
    }

    @Test func aDeviceThatLooksLikeNoScaleKeepsItsOldShape() throws {
        let entry = list.peripheral(device("Polar H10", services: [0x180D]), hci: "sim:")
        #expect(entry.hint == nil && entry.kind == nil)
        let json = try JSONShape.parse(JSON.encode(entry))
        #expect(json["driver"] == nil, "no driver key at all, as before")
        #expect(ListTable.claim(entry) == "unclaimed")
    }

    @Test func aClaimedScaleHasNoHint() {
        let entry = list.peripheral(device("WS Scale", services: [0x181D]), hci: "sim:")
        #expect(entry.driver == "standard-scale")
        #expect(entry.hint == nil)
    }
}
