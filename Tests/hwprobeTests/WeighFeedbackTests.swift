import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
@testable import hwprobe

/// What `weigh` says while it waits and when it gives up (issue 13, "Feedback"), on the simulated
/// bench and a manual clock: each test reads as a timeline, and the clock says exactly when. The
/// bench is our host stack over the virtual controller, so `drive` moves the clock from deadline
/// to deadline once everything has settled (the bench's mirror first advertises at 150 ms, its
/// scale at 250 ms, both every 100 ms).
@Suite struct WeighFeedbackTests {
    func cli(_ clock: ManualClock, terminal: Bool = false) -> (HWProbe, CapturedConsole) {
        let captured = CapturedConsole(isTerminal: terminal)
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: clock)
        return (cli, captured)
    }

    @Test func weighAtTheMirrorsAddressRefusesItAsSoonAsItIsSeen() async throws {
        let clock = ManualClock()
        let (cli, captured) = cli(clock)
        let code = await drive(clock) { await cli.run(["weigh", "--hci", "sim:", "C0:FF:EE:00:4F:2A", "--json"]) }
        #expect(code == 3)
        let error = try JSONShape.parse(captured.stdout)["error"]
        #expect(error?["kind"]?.string == "device")
        let message = try #require(error?["message"]?.string)
        #expect(message.hasPrefix("C0:FF:EE:00:4F:2A is a body-scan mirror (mirror-v1), not a scale"), "\(message)")
        #expect(message.contains("hwprobe scan --hci sim: --mirror C0:FF:EE:00:4F:2A"), "says what to run instead")
        #expect(clock.now.offset == .milliseconds(150), "refused when seen, not at the end of the window or the 30 s timeout")
    }

    struct Window: Sendable, CustomTestStringConvertible {
        var timeout: String?
        var seconds: Int64
        var testDescription: String { timeout.map { "--timeout \($0)" } ?? "default timeout" }
    }

    @Test(arguments: [Window(timeout: nil, seconds: 10), Window(timeout: "4", seconds: 4)])
    func anAddressThatNeverAdvertisesIsNotFoundWhenTheScanWindowEnds(_ window: Window) async throws {
        let clock = ManualClock()
        let (cli, captured) = cli(clock)
        let arguments = ["weigh", "--hci", "sim:", "11:22:33:44:55:66", "--json"] + (window.timeout.map { ["--timeout", $0] } ?? [])
        let code = await drive(clock) { await cli.run(arguments) }
        #expect(code == 3)
        let error = try JSONShape.parse(captured.stdout)["error"]
        #expect(error?["kind"]?.string == "device", "not found is a device problem (exit 3), not a timeout (exit 1)")
        let message = try #require(error?["message"]?.string)
        #expect(message.hasPrefix("11:22:33:44:55:66 not found: it did not advertise within \(window.seconds) s on sim:"), "\(message)")
        #expect(clock.now.offset == .seconds(window.seconds))
        #expect(captured.stderr.contains("scanning sim: for 11:22:33:44:55:66: \(window.seconds) s left\n"))
    }

    /// Hands out one device, then waits on the clock for the scan to be stopped: that wait tells
    /// the test the device has been looked at (a consumer asks for the next only when done).
    struct OneDeviceTransport: ScaleTransport {
        var device: DiscoveredDevice
        var clock: ManualClock

        func discover() -> AsyncThrowingStream<DiscoveredDevice, any Error> {
            let handedOut = Locked(false)
            let (device, clock) = (device, clock)
            return AsyncThrowingStream {
                let wasHandedOut = handedOut.withLock { state in
                    defer { state = true }
                    return state
                }
                guard wasHandedOut else { return device }
                try await clock.sleep(for: .seconds(3600))
                return nil
            }
        }

        func connect(to device: DiscoveredDevice) async throws(ScaleError) -> any ScaleConnection {
            throw .notFound("a connection (this transport only advertises)")
        }
    }

    @Test func withoutAnAddressAndNoScaleAroundNoScaleIsFound() async throws {
        let clock = ManualClock()
        let transport = OneDeviceTransport(device: MirrorScript().discoveredDevice, clock: clock)
        let weighing = Task {
            await WeighCommand.weigh(on: transport, wanted: nil, registry: DriverRegistry.linked, clock: clock,
                                     deadline: .seconds(30), hci: "sim:", statusTicks: false)
        }
        await clock.waitForSleepers(2) // the window, and the scan asking for more after passing the mirror over
        clock.advance(by: .seconds(10))
        guard case .failure(let failure) = await weighing.value else {
            Issue.record("a mirror alone gave a weight")
            return
        }
        #expect(failure.kind == .device)
        #expect(failure.message.hasPrefix("no scale found: none advertised within 10 s on sim: (seen instead: Mirror 4F2A (mirror-v1))"),
                "\(failure.message)")
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func withoutAnAddressAScaleNoDriverReadsIsNamedAsOne() async throws {
        let clock = ManualClock()
        let device = DiscoveredDevice(address: try #require(BLEAddress(string: "C1:22:33:44:55:66")), rssi: -60,
                                      advertisement: Advertisement(localName: "AE BS-06", serviceUUIDs: [BluetoothUUID(0xFFB0)]))
        let transport = OneDeviceTransport(device: device, clock: clock)
        let weighing = Task {
            await WeighCommand.weigh(on: transport, wanted: nil, registry: DriverRegistry.linked, clock: clock,
                                     deadline: .seconds(30), hci: "sim:", statusTicks: false)
        }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(10))
        guard case .failure(let failure) = await weighing.value else {
            Issue.record("an unread scale gave a weight")
            return
        }
        #expect(failure.message.hasPrefix("no scale found: none advertised within 10 s on sim: "
                                          + "(seen instead: AE BS-06 (a LeFu / ICOMON scale, no driver here))"), "\(failure.message)")
    }

    @Test func weighOnTheBenchShowsTheSearchTheConnectionAndEachReadingWhileItSettles() async throws {
        let clock = ManualClock()
        let (cli, captured) = cli(clock)
        let code = await drive(clock) { await cli.run(["weigh", "--hci", "sim:", "-v"]) }
        #expect(code == 0)
        #expect(captured.stdout == "72.35 kg from D4:12:3A:00:18:1D (standard-scale)\n")
        let lines = captured.stderr.split(separator: "\n").map(String.init)
        // weigh's own words, and the host stack's under -v (the bench is a controller like any
        // other): the mirror's advertisement then its scan response, the scale found at 250 ms and
        // connected on its next advertisement, the indications enabled, each unstable reading.
        let expected = ["controller sim: opened, address 5A:11:C0:00:00:01",
                        "scanning sim: for a scale: 10 s left",
                        "found C0:FF:EE:00:4F:2A (random) -48 dBm: mirror-v1 by service 7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00",
                        "found C0:FF:EE:00:4F:2A (random) \"Mirror 4F2A\" -48 dBm: mirror-v1 by manufacturer FFFF data 4D 52",
                        "found D4:12:3A:00:18:1D (public) \"Bench Scale\" -61 dBm: standard-scale by service 181D",
                        "connecting to Bench Scale (D4:12:3A:00:18:1D)…",
                        "connected to D4:12:3A:00:18:1D (public), handle 0x0040",
                        "link 0x0040: ATT MTU 23",
                        "link 0x0040: subscribed to indications of Weight Measurement (2A9D), handle 0x000E",
                        "waiting for a reading from Bench Scale (D4:12:3A:00:18:1D)…",
                        "71.90 kg, settling…",
                        "72.35 kg, settling…",
                        "link 0x0040 closed: we ended the connection"]
        #expect(lines.filter(expected.contains) == expected, "\(lines)")
        // Connected at 350 ms; the readings 300, 400 and 400 ms after the subscription; the
        // link's end one connection interval (30 ms) after the second 72.35.
        #expect(clock.now.offset == .milliseconds(1480))
    }

    @Test func onATerminalTheSearchCountsDownInPlaceAndIsClearedAtTheEnd() async throws {
        let clock = ManualClock()
        let (cli, captured) = cli(clock, terminal: true)
        let code = await drive(clock) { await cli.run(["weigh", "--hci", "sim:", "11:22:33:44:55:66", "--timeout", "3"]) }
        #expect(code == 3)
        #expect(clock.now.offset == .seconds(3))
        let clear = "\r\u{1B}[2K"
        #expect(captured.stderr.hasPrefix(clear + "scanning sim: for 11:22:33:44:55:66: 3 s left"
                                          + clear + "scanning sim: for 11:22:33:44:55:66: 2 s left"
                                          + clear + "scanning sim: for 11:22:33:44:55:66: 1 s left"
                                          + clear + "hwprobe weigh: 11:22:33:44:55:66 not found"), "\(captured.stderr.debugDescription)")
    }

    @Test func theHelpSaysHowLongTheScaleHasToAppear() async {
        let captured = CapturedConsole()
        #expect(await HWProbe(console: captured.console).run(["weigh", "--help"]) == 0)
        #expect(captured.stdout.contains("The scale must be seen within 10 s (or --timeout, if shorter)"))
    }
}
