import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
@testable import hwprobe

/// `list`'s status while each `--hci` is scanned, and what the table and `-v` say of each peripheral.
@Suite struct ListFeedbackTests {
    @Test func onATerminalEachScanCountsDownItsSecondsLeft() async throws {
        let clock = ManualClock()
        let captured = CapturedConsole(isTerminal: true)
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: clock)
        // Time moves deadline to deadline (the bench's advertisements, the countdown's ticks).
        let probe = cli
        let code = await drive(clock) { await probe.run(["list", "--hci", "sim:", "--scan-seconds", "3", "--json"]) }
        #expect(code == 0)
        #expect(clock.now.offset == .seconds(3))
        let clear = "\r\u{1B}[2K"
        #expect(captured.stderr == clear + "scanning sim: for peripherals: 3 s left" + clear + "scanning sim: for peripherals: 2 s left"
                + clear + "scanning sim: for peripherals: 1 s left" + clear, "\(captured.stderr.debugDescription)")
        // The status is stderr's alone: stdout is still exactly one JSON object.
        #expect(try JSONShape.parse(captured.stdout).keySet == ListCommandTests.sections)
    }

    @Test func elsewhereTheScanIsSaidOnceNotEverySecond() async throws {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 20))
        #expect(await cli.run(["list", "--hci", "sim:", "--scan-seconds", "3", "--json"]) == 0)
        #expect(captured.stderr == "scanning sim: for peripherals: 3 s left\n")
    }

    @Test func verboseListOnTheBenchSaysEachPeripheralAndTheRuleThatClaimedIt() async throws {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 20))
        #expect(await cli.run(["list", "-v", "--hci", "sim:", "--scan-seconds", "1", "--json"]) == 0)
        let lines = captured.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("found C0:FF:EE:00:4F:2A (random) \"Mirror 4F2A\" -48 dBm: mirror-v1 by manufacturer FFFF data 4D 52"))
        #expect(lines.contains("found D4:12:3A:00:18:1D (public) \"Bench Scale\" -61 dBm: standard-scale by service 181D"))
        #expect(try JSONShape.parse(captured.stdout)["peripherals"]?.array?.count == 2)
    }

    @Test func withoutVerboseNothingButTheStatusReachesStderr() async throws {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 20))
        #expect(await cli.run(["list", "--hci", "sim:", "--scan-seconds", "1"]) == 0)
        #expect(!captured.stderr.contains("found "))
        #expect(captured.stdout.contains("C0:FF:EE:00:4F:2A  random  Mirror 4F2A"))
        #expect(captured.stdout.contains("mirror: mirror-v1 by manufacturer FFFF data 4D 52"))
    }
}
