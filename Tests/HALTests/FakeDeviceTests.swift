import HAL
import HALFakes
import Testing

@Suite struct FakeDeviceTests {
    func frame(_ n: UInt64) -> GrayFrame {
        GrayFrame(width: 2, height: 1, pixels: [UInt8(n), 0], timestamp: .milliseconds(Int64(n) * 33), sequence: n)
    }

    @Test func aSlowConsumerSeesTheLatestFrameNotABacklog() async throws {
        let clock = ManualClock()
        let camera = FakeCamera(frames: (0..<10).map(frame), interval: .milliseconds(33), clock: clock)
        let stream = try await camera.start()
        var iterator = stream.makeAsyncIterator()
        for _ in 0..<10 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
            for _ in 0..<5 { await Task.yield() }
        }
        // Ten frames went by while nobody read: only the newest is waiting.
        let first = try await iterator.next()
        #expect(first?.sequence == 9)
        #expect(try await iterator.next() == nil)
    }

    @Test func aCameraThatVanishesEndsItsStreamWithTheError() async throws {
        let clock = ManualClock()
        let camera = FakeCamera(frames: [frame(0)], clock: clock, endError: .disappeared("/dev/video0"))
        let stream = try await camera.start()
        let reader = Task {
            var seen: [UInt64] = []
            do {
                for try await f in stream { seen.append(f.sequence) }
                return (seen, nil as CameraError?)
            } catch let error as CameraError {
                return (seen, error)
            }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let (seen, error) = try await reader.value
        #expect(seen == [0])
        #expect(error == .disappeared("/dev/video0"))
        #expect(error?.description == "camera /dev/video0 disappeared")
    }

    @Test func codeSourcePlaysBatchesInOrder() async throws {
        let clock = ManualClock()
        let source = FakeCodeSource(texts: ["a", "b", "a"], interval: .milliseconds(100), clock: clock)
        let reader = Task {
            var texts: [String] = []
            for try await frame in source.codes() { texts += frame.symbols.compactMap(\.text) }
            return texts
        }
        for _ in 0..<3 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        #expect(try await reader.value == ["a", "b", "a"])
    }

    @Test func recorderKeepsCuesWithTheirTimesAndCanVanish() async throws {
        let clock = ManualClock()
        let sink = RecordingHapticSink(clock: clock, failAfter: 2)
        try await sink.play(.lightImpact)
        clock.advance(by: .milliseconds(250))
        try await sink.play(.success)
        await #expect(throws: HapticError.disappeared("recorder")) { try await sink.play(.error) }
        #expect(sink.cues == [.lightImpact, .success])
        #expect(sink.recorded.map(\.at.offset) == [.zero, .milliseconds(250)])
    }

    @Test func scriptedScalePlaysItsReadings() async throws {
        let clock = ManualClock()
        let device = DiscoveredDevice(address: BLEAddress(string: "01:02:03:04:05:06")!, rssi: -60, advertisement: Advertisement())
        let scale = FakeScale(device: device, steps: [
            .init(after: .milliseconds(500), reading: WeightReading(kilograms: 70.1, stable: false)),
            .init(after: .milliseconds(500), reading: WeightReading(kilograms: 70.2, stable: true)),
        ], disconnectAfterLast: .seconds(1))
        let link = scale.connect(clock: clock)
        let log = EventLog(link)
        #expect(await drive(clock) { log.disconnection != nil })
        #expect(log.events == [.weight(WeightReading(kilograms: 70.1, stable: false)),
                               .weight(WeightReading(kilograms: 70.2, stable: true)),
                               .disconnected(.remoteUserTerminated)])
    }
}

@Suite struct HapticPatternTests {
    @Test func everyCueHasAPatternWithinBounds() {
        for cue in HapticCue.allCases {
            let pattern = cue.pattern
            #expect(!pattern.pulses.isEmpty, "\(cue)")
            #expect(pattern.pulses.first?.strength ?? 0 > 0, "\(cue) starts with a pause")
            #expect(pattern.pulses.allSatisfy { (0...1).contains($0.strength) && $0.duration > .zero })
            #expect(pattern.totalDuration <= .milliseconds(500), "\(cue) is too long to feel like a cue")
        }
    }

    @Test func cuesAreToldApartByFeel() {
        let patterns = HapticCue.allCases.map(\.pattern.pulses)
        #expect(Set(patterns).count == HapticCue.allCases.count)
        #expect(HapticCue.lightImpact.pattern.pulses[0].strength < HapticCue.mediumImpact.pattern.pulses[0].strength)
        #expect(HapticCue.error.pattern.indicator != nil && HapticCue.success.pattern.indicator != nil)
    }

    @Test func strengthIsClamped() {
        #expect(HapticPulse(strength: 1.7, duration: .milliseconds(1)).strength == 1)
        #expect(HapticPulse(strength: -1, duration: .milliseconds(1)).strength == 0)
    }
}
