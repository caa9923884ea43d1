import HAL
import HALFakes
import Testing
@testable import hwprobe

/// `scan` and `demo` end to end on the simulated bench, sped up so they take about a second.
@Suite struct ScanCommandTests {
    func run(_ arguments: [String], script: MirrorScript = MirrorScript()) async throws -> (Int32, [String: JSONShape], String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25), mirrorScript: script)
        let code = await cli.run(arguments)
        return (code, try JSONShape.parse(captured.stdout), captured.stderr)
    }

    @Test func aScanOnTheBenchReportsTheContractsObject() async throws {
        let (code, json, stderr) = try await run(["scan", "--hci", "sim:", "--yes", "--json", "--height-cm", "182"])
        #expect(code == 0)
        #expect(json["outcome"]?.string == "complete")
        #expect(json["states"]?.array?.compactMap(\.string) == ["connecting", "waitForScale", "preflight", "alignScale", "confirmAlignment",
                                                                  "warmingUp", "phoneDown", "countdown", "scanning", "stepOff",
                                                                  "processing", "complete"])
        let result = try #require(json["result"])
        #expect(result.keys == ["scanId", "weightKg", "bodyFatPercent", "pointCount"])
        #expect(result["scanId"]?.number == 40_213)
        #expect(result["weightKg"]?.number == 72.35)
        #expect(result["bodyFatPercent"]?.number == 18.4)
        #expect(result["pointCount"]?.number == 412_388)
        #expect(json["failure"] == nil)
        #expect(stderr.contains("Scan complete"), "screens go to stderr with --json")
    }

    @Test func aMirrorErrorExitsOneWithItsReasonAndCode() async throws {
        let (code, json, _) = try await run(["scan", "--hci", "sim:", "--yes", "--json"],
                                            script: MirrorScript(fault: .error(.userMoved, in: .scanning, after: .seconds(1))))
        #expect(code == 1)
        #expect(json["outcome"]?.string == "failed")
        #expect(json["states"]?.array?.last?.string == "failed")
        #expect(json["failure"]?["reason"]?.string == "mirrorError")
        #expect(json["failure"]?["code"]?.number == 1)
        #expect(json["failure"]?["message"]?.string?.contains("You moved during the scan.") == true)
    }

    @Test func aDisconnectionExitsOneAsDisconnected() async throws {
        let (code, json, _) = try await run(["scan", "--hci", "sim:", "--yes", "--json"],
                                            script: MirrorScript(fault: .disconnect(in: .warmingUp, after: .milliseconds(500))))
        #expect(code == 1)
        #expect(json["failure"]?["reason"]?.string == "disconnected")
        #expect(json["failure"]?["code"] == nil)
    }

    @Test func questionsNeedATerminalOrYes() async throws {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(["scan", "--hci", "sim:", "--json"])
        #expect(code == 2)
        #expect(try JSONShape.parse(captured.stdout)["error"]?["kind"]?.string == "usage")
    }

    @Test func badHeightIsAUsageError() async throws {
        let (code, json, _) = try await run(["scan", "--hci", "sim:", "--yes", "--json", "--height-cm", "tall"])
        #expect(code == 2)
        #expect(json["error"]?["message"]?.string?.contains("--height-cm") == true)
    }
}

@Suite struct DemoCommandTests {
    @Test func theDemoRunsEveryFlowToTheEndUnattended() async {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.demoSpeed = 25
        let code = await cli.run(["demo", "--no-color"])
        #expect(code == 0, "\(captured.stdout.suffix(400))")
        let out = captured.stdout
        for line in ["mirror-v1 by manufacturer FFFF data 4D 52", "Scan complete", "♪ success", "4 of 4 scanned",
                     "That isn't a backup code.", "Incorrect password", "♪ error", "Decrypted 211 bytes", "Demo complete."] {
            #expect(out.contains(line), "\(line)")
        }
        #expect(!out.contains("\u{1B}["), "no colour with --no-color, and no redraw when not a terminal")
    }
}

@Suite struct WeighCommandTests {
    @Test func weighsTheBenchScaleUntilItsStableFlag() async throws {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(["weigh", "--hci", "sim:", "--json"])
        #expect(code == 0, "\(captured.stderr)")
        let json = try JSONShape.parse(captured.stdout)
        #expect(json.keySet == ["address", "driver", "weightKg", "stable"])
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "standard-scale")
        #expect(json["address"]?.string == "D4:12:3A:00:18:1D")
    }

    @Test func aScaleThatNeverSettlesTimesOut() async throws {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(["weigh", "--hci", "sim:", "D4:12:3A:00:18:1D", "--timeout", "0.5", "--json"])
        #expect(code == 1)
        #expect(try JSONShape.parse(captured.stdout)["error"]?["kind"]?.string == "timedOut")
    }

    @Test func twoEqualReadingsCountAsStableWithoutAFlag() async {
        let clock = ManualClock()
        let device = DiscoveredDevice(address: BLEAddress(string: "01:02:03:04:05:06")!, rssi: -60,
                                      advertisement: Advertisement(serviceUUIDs: [BluetoothUUID(0x181D)]))
        let scale = FakeScale(device: device, steps: [
            .init(after: .milliseconds(100), reading: WeightReading(kilograms: 70.0, stable: nil)),
            .init(after: .milliseconds(100), reading: WeightReading(kilograms: 70.3, stable: nil)),
            .init(after: .milliseconds(100), reading: WeightReading(kilograms: 70.305, stable: nil)),
        ])
        let transport = FakeScaleTransport(peripherals: [.init(device: device) { scale.connect(clock: clock) }], clock: clock)
        let task = Task {
            await WeighCommand.weigh(on: transport, wanted: nil, registry: DriverRegistry.linked,
                                     clock: ContinuousClock(), deadline: .seconds(30))
        }
        // Three readings, a tenth of a second apart: the third equals the second within 0.005 kg.
        for _ in 0..<3 {
            await clock.waitForSleepers(1)
            clock.advanceToNextDeadline()
        }
        let result = await task.value
        #expect((try? result.get())?.weightKg == 70.305)
    }
}
