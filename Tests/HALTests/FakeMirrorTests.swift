import TestKit
import HAL
import HALFakes
import Testing

/// The fake mirror must behave like docs/mirror-gatt-v1.md, or flows tested against it prove nothing.
@Suite struct FakeMirrorTests {
    /// Plays the client's side of a good scan, step by step, and checks the mirror's answers.
    @Test func aGoodScanFollowsTheProfile() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        #expect(try await link.readInfo().protocolVersion == 1)

        #expect(await drive(clock) { log.lastScale?.present == true })
        await #expect(throws: ScaleError.refused(.confirmAlignment, .notAligned)) { try await link.send(.confirmAlignment) }
        #expect(await drive(clock) { log.lastAlignment?.aligned == true })
        try await link.send(.confirmAlignment)

        await #expect(throws: ScaleError.refused(.scanToken(Array(repeating: 7, count: 16)), .notInitialized)) {
            try await link.send(.scanToken(Array(repeating: 7, count: 16)))
        }
        await #expect(throws: ScaleError.refused(.startScan, .notReady)) { try await link.send(.startScan) }
        try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
        try await link.send(.scanToken(Array(repeating: 7, count: 16)))
        #expect(await eventually { log.scanStates.last == .warmingUp })
        #expect(await drive(clock) { log.scanStates.last == .ready })
        #expect(await drive(clock) { log.lastScale?.occupied == true && log.lastScale?.stable == true })
        #expect(log.lastScale?.kilograms == 72.35)
        await #expect(throws: ScaleError.refused(.startScan, .attError(0x02))) { _ = try await link.readResult() }

        try await link.send(.startScan)
        #expect(await drive(clock) { log.scanStates.last == .complete })
        let progress = log.events.compactMap { event -> UInt8? in
            if case .scanState(let s) = event, s.state == .scanning { s.progress } else { nil }
        }
        #expect(progress.first == 0)
        #expect(progress == progress.sorted())
        #expect(progress.count >= 10)
        let states = log.scanStates.reduce(into: [MirrorScanState]()) { if $0.last != $1 { $0.append($1) } }
        #expect(states == [.warmingUp, .ready, .scanning, .stepOff, .processing, .complete])
        #expect(try await link.readResult() == mirror.script.result)
        #expect(await mirror.phases == [.connected, .scalePresent, .aligned, .warmingUp, .ready, .scanning, .stepOff, .processing, .complete])
        await mirror.shutDown()
    }

    @Test func disconnectFaultDropsTheLinkInItsPhase() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(script: MirrorScript(fault: .disconnect(in: .warmingUp, after: .milliseconds(500))), clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        #expect(await drive(clock) { log.lastAlignment?.aligned == true })
        try await link.send(.initialize(heightMillimetres: 1800, units: .imperial))
        try await link.send(.scanToken(Array(repeating: 1, count: 16)))
        #expect(await drive(clock) { log.disconnection != nil })
        #expect(log.disconnection == .supervisionTimeout)
        #expect(!log.scanStates.contains(.ready))
        await #expect(throws: ScaleError.disconnected(.localHostTerminated)) { try await link.send(.abort) }
    }

    @Test func steppingOffEarlyIsErrorFour() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(script: MirrorScript(fault: .stepOffEarly(atProgress: 40)), clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
        try await link.send(.scanToken(Array(repeating: 1, count: 16)))
        #expect(await drive(clock) { log.lastScale?.stable == true })
        try await link.send(.startScan)
        #expect(await drive(clock) { log.scanStates.last == .error })
        let last = log.events.compactMap { if case .scanState(let s) = $0 { s } else { nil } }.last
        #expect(last?.error == .steppedOffEarly)
        try await link.send(.reset)
        #expect(await eventually { log.scanStates.last == .idle })
    }

    @Test func errorFaultCarriesItsCode() async throws {
        for code in MirrorErrorCode.allKnown {
            let clock = ManualClock()
            let mirror = FakeMirror(script: MirrorScript(fault: .error(code, in: .ready, after: .milliseconds(100))), clock: clock)
            let link = await mirror.connect()
            let log = EventLog(link)
            try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
            try await link.send(.scanToken(Array(repeating: 1, count: 16)))
            #expect(await drive(clock) { log.scanStates.last == .error })
            let last = log.events.compactMap { if case .scanState(let s) = $0 { s } else { nil } }.last
            #expect(last?.error == code)
            await mirror.shutDown()
        }
    }

    @Test func lowBatteryRefusesToScanWithErrorSix() async throws {
        var script = MirrorScript()
        script.info.batteryPercent = 8
        let clock = ManualClock()
        let mirror = FakeMirror(script: script, clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
        try await link.send(.scanToken(Array(repeating: 1, count: 16)))
        #expect(await drive(clock) { log.scanStates.last == .ready })
        try await link.send(.startScan)
        #expect(await eventually { log.events.last == .scanState(MirrorScanStatus(state: .error, error: .batteryLow)) })
        await mirror.shutDown()
    }

    @Test func silenceStopsNotificationsButNotTheLink() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(script: MirrorScript(fault: .silence(in: .warmingUp)), clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
        try await link.send(.scanToken(Array(repeating: 1, count: 16)))
        #expect(await drive(clock, limit: 200) { false } == false)
        #expect(!log.scanStates.contains(.ready))
        #expect(await mirror.scanState == .ready)
        #expect(link.isConnected)
        await mirror.shutDown()
    }

    @Test func abortReturnsToIdleAndCancelsTheScan() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(clock: clock)
        let link = await mirror.connect()
        let log = EventLog(link)
        try await link.send(.initialize(heightMillimetres: 1700, units: .metric))
        try await link.send(.scanToken(Array(repeating: 1, count: 16)))
        try await link.send(.abort)
        #expect(await eventually { log.scanStates == [.warmingUp, .idle] })
        clock.advance(by: .seconds(10))
        for _ in 0..<20 { await Task.yield() }
        #expect(!log.scanStates.contains(.ready))
        await mirror.shutDown()
    }

    @Test func transportDiscoversAndConnects() async throws {
        let clock = ManualClock()
        let mirror = FakeMirror(clock: clock)
        let transport = FakeScaleTransport(peripherals: [.mirror(mirror, appearsAfter: .seconds(1))], clock: clock)
        let discovery = Task { () -> DiscoveredDevice? in
            for try await device in transport.discover() { return device }
            return nil
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let found = try #require(try await discovery.value)
        #expect(found.name == "Mirror 4F2A")
        #expect(found.advertisement.manufacturerData[0xFFFF]?.prefix(2) == [0x4D, 0x52])
        let link = try await transport.connect(to: found)
        #expect(link.device.address == found.address)
        let stranger = DiscoveredDevice(address: BLEAddress(string: "00:11:22:33:44:55")!, rssi: -70, advertisement: Advertisement())
        await #expect(throws: ScaleError.self) { _ = try await transport.connect(to: stranger) }
        await mirror.shutDown()
    }
}
