import BLEProtocol
import HAL
import HALFakes
import MirrorV1
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController

/// The controller at the HCI level, played by hand: the answers a controller gives to each
/// command, event masks, scanning in both forms, connecting and cancelling, and garbage.
@Suite struct ControllerHCITests {
    static let mirror = MirrorScript().address

    func make(_ peripherals: [any VirtualPeripheral] = [MirrorPeripheral()], clock: ManualClock,
                    configuration: ControllerConfiguration = ControllerConfiguration()) -> (VirtualController, RawHost) {
        let controller = VirtualController(peripherals: peripherals, clock: clock, configuration: configuration)
        return (controller, RawHost(controller))
    }

    @Test func theInitSequenceGetsRealisticAnswersWithOneCommandCredit() async throws {
        let (_, host) = make(clock: ManualClock())
        let events = try await host.send(.reset)
        #expect(events == [.commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0x00])])
        let version = try LocalVersion(returnParameters: try await host.complete(.readLocalVersionInformation))
        #expect(version == LocalVersion(hciVersion: 0x0C, hciRevision: 1, lmpVersion: 0x0C, manufacturer: 0xFFFF, lmpSubversion: 1))
        let features = try ReturnParameters.features(try await host.complete(.readLocalSupportedFeatures))
        #expect(features & (1 << 38) != 0, "LE Supported (Controller)")
        #expect(features & (1 << 37) != 0, "BR/EDR Not Supported")
        let leFeatures = try ReturnParameters.features(try await host.complete(.leReadLocalSupportedFeatures))
        #expect(leFeatures == (1 << 1) | (1 << 12))
        #expect(try ACLBufferSize.fromLEReadBufferSize(try await host.complete(.leReadBufferSize)) == ACLBufferSize(length: 27, count: 8))
        #expect(try ACLBufferSize.fromReadBufferSize(try await host.complete(.readBufferSize)) == ACLBufferSize(length: 27, count: 8))
        #expect(try ReturnParameters.bdAddress(try await host.complete(.readBDADDR)) == ControllerConfiguration().address)
        #expect(try await host.complete(.setEventMask(0x3DBF_F807_FFFB_FFFF)) == [0x00])
        #expect(try await host.complete(.leSetEventMask(0x000F_FFFF)) == [0x00])
        #expect(try await host.complete(.writeLEHostSupport(le: true)) == [0x00])
        #expect(try await host.complete(HCICommand(opcode: 0x0C6C)) == [0x00, 0x01, 0x00])
    }

    @Test func theSupportedCommandsAreTheImplementedOnes() async throws {
        let (_, host) = make(clock: ManualClock())
        let bitmap = Array(try await host.complete(HCICommand(opcode: 0x1002)).dropFirst())
        #expect(bitmap.count == 64)
        func bit(_ octet: Int, _ bit: Int) -> Bool { bitmap[octet] & (1 << bit) != 0 }
        #expect(bit(5, 7), "Reset")
        #expect(bit(0, 5), "Disconnect")
        #expect(bit(26, 4), "LE Create Connection")
        #expect(bit(37, 7), "LE Extended Create Connection")
        #expect(!bit(33, 6), "LE Set Data Length is not implemented")
        #expect(!bit(25, 5), "nor LE Set Advertising Parameters: this is a central")
        var legacyOnly = ControllerConfiguration()
        legacyOnly.supportsExtendedAdvertising = false
        let (_, older) = make(clock: ManualClock(), configuration: legacyOnly)
        #expect(try await older.complete(HCICommand(opcode: 0x1002))[1 + 37] == 0)
        #expect(try await older.complete(ExtendedCommands.scanEnable(true)) == [0x01])
    }

    @Test func unknownCommandsAndBadParametersAreAnsweredNotIgnored() async throws {
        let (controller, host) = make(clock: ManualClock())
        #expect(try await host.complete(HCICommand(opcode: 0xFC01, parameters: [1, 2])) == [0x01]) // vendor
        #expect(try await host.complete(HCICommand(opcode: 0x2022, parameters: [0x40, 0, 0xFB, 0, 0x48, 0x08])) == [0x01])
        #expect(try await host.complete(HCICommand(opcode: 0x0C03, parameters: [0x00])) == [0x12])
        #expect(try await host.complete(HCICommand(opcode: 0x0C01, parameters: [1, 2, 3])) == [0x12])
        // Commands answered with Command Status are refused in one.
        #expect(try await host.status(.disconnect(handle: 0x0040, reason: 0x13)) == 0x02)
        #expect(try await host.status(HCICommand(opcode: 0x0406, parameters: [0x40])) == 0x12)
        #expect(controller.counters.unknownCommands == 2)
        #expect(controller.counters.invalidCommands == 3)
    }

    @Test func bytesThatAreNotH4GetAHardwareErrorAndTheControllerCarriesOn() async throws {
        let (controller, host) = make(clock: ManualClock())
        try await host.write([0xFF, 0x00, 0x01, 0x02])
        #expect(try await host.events() == [HCIEventPacket(code: 0x10, parameters: [0x01])])
        #expect(try await host.send(.reset) == [.commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0x00])])
        // ACL for no link and an event sent to the controller are dropped, as controllers do.
        try await host.write(HCIPacket.acl(ACLPacket(handle: 0x0123, boundary: .firstNonFlushable, data: [1, 2, 3, 4])).h4Bytes)
        try await host.write(HCIPacket.event(HCIEventPacket(code: 0x0E, parameters: [1, 3, 0x0C, 0])).h4Bytes)
        #expect(try await host.drain().isEmpty)
        #expect(controller.counters.droppedHostPackets == 2)
        #expect(controller.counters.hardwareErrors == 1)
    }

    @Test func afterResetTheLEMetaEventIsMaskedSoNothingIsReported() async throws {
        let clock = ManualClock()
        let (controller, host) = make(clock: clock)
        await withSerialExecutor {
            do {
                _ = try await host.complete(.reset)
                _ = try await host.complete(.leSetScanParameters(active: true, interval: 0x60, window: 0x30, ownAddressType: 0, filterPolicy: 0))
                _ = try await host.complete(.leSetScanEnable(true, filterDuplicates: false))
                await advance(clock, to: .milliseconds(400))
                #expect(try await host.drain().isEmpty, "the default event mask leaves LE Meta out")
                #expect(controller.isScanning)
                _ = try await host.complete(.setEventMask(1 << 61))
                await advance(clock, to: .milliseconds(500))
                #expect(try await host.events().count == 2, "LE Advertising Reports are in the default LE mask")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    /// docs/mirror-gatt-v1.md's legacy form: flags and the service UUID in ADV_IND, manufacturer data
    /// and name in the scan response; a scanner merges the two.
    @Test func legacyScanningReportsTheAdvertisementThenItsScanResponse() async throws {
        let clock = ManualClock()
        let (_, host) = make(clock: clock)
        let reports = try await withSerialExecutor { () async throws -> [LEAdvertisingReport] in
            try await host.initialise()
            _ = try await host.complete(.leSetScanParameters(active: true, interval: 0x60, window: 0x30, ownAddressType: 0, filterPolicy: 0))
            _ = try await host.complete(.leSetScanEnable(true, filterDuplicates: false))
            await advance(clock, to: .milliseconds(149))
            #expect(try await host.drain().isEmpty, "the mirror first advertises at 150 ms")
            await advance(clock, to: .milliseconds(150))
            return try await Self.reports(host)
        }
        #expect(reports.count == 2)
        guard reports.count == 2 else { return }
        #expect(reports.map(\.isLegacy) == [true, true])
        #expect(reports.map(\.isScanResponse) == [false, true])
        #expect(reports[0].connectable && reports[0].scannable)
        #expect(reports.allSatisfy { $0.address == Self.mirror && $0.rssi == -48 })
        #expect(reports[0].data.count == 21)
        let advertisement = try reports[0].advertisement()
        #expect(advertisement.serviceUUIDs == [MirrorGATT.service] && advertisement.localName == nil)
        let merged = advertisement.merging(try reports[1].advertisement())
        #expect(merged == MirrorScript().advertisement)
        #expect(DriverRegistry(drivers: [MirrorV1Driver()]).claim(.advertisement(merged))?.descriptor.id == "mirror-v1")
    }

    @Test func passiveScanningGetsNoScanResponseAndLegacyScannersMissExtendedAdvertising() async throws {
        let clock = ManualClock()
        var script = MirrorScript()
        script.address = BLEAddress(string: "C0:FF:EE:00:00:02/random")!
        let (_, host) = make([MirrorPeripheral(), MirrorPeripheral(script: script, extendedAdvertising: true)], clock: clock)
        let reports = try await withSerialExecutor { () async throws -> [LEAdvertisingReport] in
            try await host.initialise()
            _ = try await host.complete(.leSetScanParameters(active: false, interval: 0x60, window: 0x30, ownAddressType: 0, filterPolicy: 0))
            _ = try await host.complete(.leSetScanEnable(true, filterDuplicates: false))
            await advance(clock, to: .milliseconds(150))
            return try await Self.reports(host)
        }
        #expect(reports.map(\.isScanResponse) == [false])
        #expect(reports.map(\.address) == [Self.mirror])
    }

    /// With the extended scanning commands, a legacy advertiser comes as extended reports with
    /// the legacy bit (event types 0x13 and 0x1B), and an extended advertiser as one report
    /// carrying all four AD structures. Both merge to the same advertisement, claimed alike.
    @Test func extendedScanningReportsBothOfTheProfilesForms() async throws {
        let clock = ManualClock()
        var script = MirrorScript()
        script.address = BLEAddress(string: "C0:FF:EE:00:00:02/random")!
        let (_, host) = make([MirrorPeripheral(), MirrorPeripheral(script: script, extendedAdvertising: true)], clock: clock)
        let reports = try await withSerialExecutor { () async throws -> [LEAdvertisingReport] in
            try await host.initialise()
            #expect(try await host.complete(ExtendedCommands.scanParameters(active: true)) == [0x00])
            #expect(try await host.complete(ExtendedCommands.scanEnable(true)) == [0x00])
            await advance(clock, to: .milliseconds(150))
            return try await Self.reports(host)
        }
        let legacy = reports.filter { $0.address == Self.mirror }
        let extended = reports.filter { $0.address == script.address }
        #expect(legacy.map(\.isLegacy) == [true, true])
        #expect(legacy.map(\.isScanResponse) == [false, true])
        #expect(extended.count == 1)
        guard legacy.count == 2, let one = extended.first else { return }
        #expect(!one.isLegacy && one.connectable && !one.scannable)
        #expect(one.data.count == 45)
        let fromLegacy = try legacy[0].advertisement().merging(try legacy[1].advertisement())
        let fromExtended = try one.advertisement()
        #expect(fromLegacy == MirrorScript().advertisement)
        #expect(fromExtended.localName == "Mirror 4F2A")
        #expect(fromExtended.manufacturerData == fromLegacy.manufacturerData && fromExtended.serviceUUIDs == fromLegacy.serviceUUIDs)
        let registry = DriverRegistry(drivers: [MirrorV1Driver()])
        #expect(registry.claim(.advertisement(fromExtended))?.reason == registry.claim(.advertisement(fromLegacy))?.reason)
    }

    @Test func legacyAndExtendedCommandsDoNotMixUntilReset() async throws {
        let (_, host) = make(clock: ManualClock())
        try await host.initialise()
        #expect(try await host.complete(ExtendedCommands.scanParameters(active: true)) == [0x00])
        #expect(try await host.complete(.leSetScanParameters(active: true, interval: 0x60, window: 0x30, ownAddressType: 0, filterPolicy: 0)) == [0x0C])
        #expect(try await host.status(.leCreateConnection(peer: Self.mirror, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4)) == 0x0C)
        _ = try await host.complete(.reset)
        #expect(try await host.complete(.leSetScanEnable(true, filterDuplicates: false)) == [0x00])
        #expect(try await host.complete(ExtendedCommands.scanEnable(false)) == [0x0C])
        // Only the 1M PHY: Coded is an unsupported feature.
        _ = try await host.complete(.reset)
        #expect(try await host.complete(ExtendedCommands.scanParameters(active: true, phys: 0x05)) == [0x11])
    }

    @Test func duplicateFilteringReportsEachAdvertiserOnceAndAScanDurationEndsWithATimeout() async throws {
        let clock = ManualClock()
        let scale = StandardScalePeripheral(scale: FakeScale(device: DiscoveredDevice(
            address: BLEAddress(string: "D4:12:3A:00:18:1D")!, rssi: -61,
            advertisement: Advertisement(flags: 0x06, localName: "Bench Scale", serviceUUIDs: [BluetoothUUID(0x181D)])), steps: []))
        let (controller, host) = make([MirrorPeripheral(), scale], clock: clock)
        let (reports, events) = try await withSerialExecutor { () async throws -> ([LEAdvertisingReport], [HCIEvent]) in
            try await host.initialise()
            _ = try await host.complete(ExtendedCommands.scanParameters(active: true))
            // 1 s of scanning (100 × 10 ms) with duplicates filtered.
            _ = try await host.complete(ExtendedCommands.scanEnable(true, duplicates: 1, duration: 100))
            await advance(clock, to: .milliseconds(2000))
            let events = try await host.events().map { try HCIEvent(parsing: $0) }
            var reports: [LEAdvertisingReport] = []
            for case .leAdvertisingReports(let some) in events { reports += some }
            return (reports, events)
        }
        #expect(reports.filter { $0.address == Self.mirror }.map(\.isScanResponse) == [false, true])
        #expect(reports.filter { $0.address == scale.address }.map(\.isScanResponse) == [false, true])
        #expect(events.last == .leMeta(subevent: 0x11, parameters: []), "LE Scan Timeout")
        #expect(!controller.isScanning)
    }

    @Test func aConnectionCompletesOnThePeripheralsNextAdvertisement() async throws {
        let clock = ManualClock()
        let (controller, host) = make(clock: clock)
        let create = HCICommand.leCreateConnection(peer: Self.mirror, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                   minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4)
        let events = try await withSerialExecutor { () async throws -> [HCIEvent] in
            try await host.initialise()
            #expect(try await host.status(create) == 0x00)
            #expect(try await host.status(create) == 0x0C, "one attempt at a time")
            await advance(clock, to: .milliseconds(149))
            #expect(try await host.drain().isEmpty)
            await advance(clock, to: .milliseconds(150))
            return try await host.events().map { try HCIEvent(parsing: $0) }
        }
        // Our host unmasks the enhanced event, which then replaces the legacy one.
        guard case .leConnectionComplete(let complete)? = events.first else {
            Issue.record("\(events)")
            return
        }
        #expect(complete == LEConnectionComplete(status: 0, handle: 0x0040, role: 0, peer: Self.mirror, interval: 0x18, latency: 0,
                                                 supervisionTimeout: 0x1F4))
        #expect(controller.connectionHandles == [0x0040])
        #expect(!controller.isInitiating)
        // Already connected to it: Connection Already Exists.
        #expect(try await host.status(create) == 0x0B)
        #expect(try await host.complete(.leCreateConnectionCancel) == [0x0C], "nothing to cancel")
    }

    @Test func withOnlyTheLegacyEventUnmaskedTheLegacyConnectionCompleteCarriesTheLink() async throws {
        let clock = ManualClock()
        let (_, host) = make(clock: clock)
        let events = try await withSerialExecutor { () async throws -> [HCIEventPacket] in
            _ = try await host.complete(.reset)
            _ = try await host.complete(.setEventMask(0x3DBF_F807_FFFB_FFFF))
            _ = try await host.status(.leCreateConnection(peer: Self.mirror, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .milliseconds(150))
            return try await host.events()
        }
        #expect(events.first?.code == 0x3E && events.first?.parameters.first == 0x01)
        #expect(events.first?.parameters.count == 19)
    }

    @Test func cancellingEndsTheAttemptWithUnknownConnectionIdentifier() async throws {
        let clock = ManualClock()
        let (controller, host) = make(clock: clock)
        let absent = BLEAddress(string: "11:22:33:44:55:66")!
        try await host.initialise()
        #expect(try await host.status(.leCreateConnection(peer: absent, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4)) == 0)
        let events = try await host.send(.leCreateConnectionCancel)
        #expect(events.count == 2)
        #expect(events.first == .commandComplete(numPackets: 1, opcode: 0x200E, returnParameters: [0x00]))
        guard case .leConnectionComplete(let failed)? = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(failed.status == 0x02)
        #expect(!controller.isInitiating)
    }

    @Test func connectionParametersOutsideTheSpecificationsRangesAreInvalid() async throws {
        let (_, host) = make(clock: ManualClock())
        try await host.initialise()
        func create(_ minimum: UInt16, _ maximum: UInt16, _ latency: UInt16, _ timeout: UInt16, own: UInt8 = 0) -> HCICommand {
            .leCreateConnection(peer: Self.mirror, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: own, minInterval: minimum,
                                maxInterval: maximum, latency: latency, supervisionTimeout: timeout)
        }
        #expect(try await host.status(create(5, 0x28, 0, 0x1F4)) == 0x12, "interval under 7.5 ms")
        #expect(try await host.status(create(0x28, 0x18, 0, 0x1F4)) == 0x12, "minimum above maximum")
        #expect(try await host.status(create(0x18, 0x28, 500, 0x1F4)) == 0x12, "latency of 500")
        #expect(try await host.status(create(0x18, 0x0C80, 0, 0x0A)) == 0x12, "timeout shorter than two intervals")
        #expect(try await host.status(create(0x18, 0x28, 0, 0x1F4, own: 1)) == 0x12, "a random own address that was never set")
        _ = try await host.complete(.leSetRandomAddress(BLEAddress(string: "C3:00:00:00:00:01/random")!))
        #expect(try await host.status(create(0x18, 0x28, 0, 0x1F4, own: 1)) == 0x00)
    }

    /// LE Extended Create Connection reaches an extended advertiser, which LE Create Connection
    /// (a legacy initiator) cannot: it only hears legacy advertising.
    @Test func onlyAnExtendedInitiatorConnectsToAnExtendedAdvertiser() async throws {
        let clock = ManualClock()
        var script = MirrorScript()
        script.address = BLEAddress(string: "C0:FF:EE:00:00:02/random")!
        let (controller, host) = make([MirrorPeripheral(script: script, extendedAdvertising: true)], clock: clock)
        let legacy = try await withSerialExecutor { () async throws -> [UInt16] in
            try await host.initialise()
            _ = try await host.status(.leCreateConnection(peer: script.address, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .milliseconds(500))
            return controller.connectionHandles
        }
        #expect(legacy.isEmpty)
        _ = try await host.send(.leCreateConnectionCancel)
        _ = try await host.complete(.reset)
        let events = try await withSerialExecutor { () async throws -> [HCIEvent] in
            _ = try await host.complete(.setEventMask(0x3DBF_F807_FFFB_FFFF))
            _ = try await host.complete(.leSetEventMask(0x000F_FFFF))
            #expect(try await host.status(ExtendedCommands.createConnection(script.address)) == 0x00)
            await advance(clock, to: .milliseconds(650))
            return try await host.events().map { try HCIEvent(parsing: $0) }
        }
        guard case .leConnectionComplete(let complete)? = events.first else {
            Issue.record("\(events)")
            return
        }
        #expect(complete.status == 0 && complete.peer == script.address && complete.handle == 0x0040)
    }

    @Test func aLinkAnswersQueriesAboutItselfAndResetEndsItWithoutAWord() async throws {
        let clock = ManualClock()
        let (controller, host) = make(clock: clock)
        let events = try await withSerialExecutor { () async throws -> [HCIEvent] in
            try await host.initialise()
            _ = try await host.status(.leCreateConnection(peer: Self.mirror, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .milliseconds(150))
            _ = try await host.drain()
            #expect(try await host.complete(HCICommand(opcode: 0x1405, parameters: [0x40, 0x00])) == [0x00, 0x40, 0x00, 0xD0], "RSSI -48")
            #expect(try await host.complete(HCICommand(opcode: 0x1405, parameters: [0x41, 0x00])) == [0x02, 0x41, 0x00, 0x00])
            var events = try await host.send(HCICommand(opcode: 0x2016, parameters: [0x40, 0x00]))
            events += try await host.send(HCICommand(opcode: 0x041D, parameters: [0x40, 0x00]))
            return events
        }
        #expect(events == [.commandStatus(status: 0, numPackets: 1, opcode: 0x2016),
                           .leMeta(subevent: 0x04, parameters: [0x00, 0x40, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0]),
                           .commandStatus(status: 0, numPackets: 1, opcode: 0x041D),
                           .other(code: 0x0C, parameters: [0x00, 0x40, 0x00, 0x0C, 0xFF, 0xFF, 0x01, 0x00])])
        // Reset drops the link without a Disconnection Complete; the mirror advertises again.
        #expect(try await host.send(.reset) == [.commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0x00])])
        #expect(controller.connectionHandles.isEmpty)
        #expect(controller.peripheral(Self.mirror, as: MirrorPeripheral.self)?.isAdvertising == true)
    }

    static func reports(_ host: RawHost) async throws -> [LEAdvertisingReport] {
        try await host.events().flatMap { packet -> [LEAdvertisingReport] in
            if case .leAdvertisingReports(let reports) = try HCIEvent(parsing: packet) { reports } else { [] }
        }
    }
}
