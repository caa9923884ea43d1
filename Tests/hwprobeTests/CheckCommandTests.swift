import Foundation
import HAL
import HALFakes
import PeerSupport
import Testing
import Peripherals
import VirtualController
@testable import hwprobe

/// `hwprobe check` on the simulated bench (our own peripherals over the in-process controller,
/// sped up), and against bumble's mirror, scale and body-composition peers (an independent
/// implementation of the same profiles). Each deliberate deviation fails exactly its check.
@Suite struct CheckCommandTests {
    func run(_ arguments: [String]) async throws -> (Int32, String, String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25))
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    static func failed(_ json: [String: JSONShape]) -> [String] {
        (json["checks"]?.array ?? []).filter { $0["result"]?.string == "fail" }.compactMap { $0["id"]?.string }
    }

    @Test func theBenchMirrorPassesEveryCheckOfItsProfile() async throws {
        let (code, out, err) = try await run(["check", "--hci", "sim:", "--json"])
        #expect(code == 0, "\(err)")
        let json = try JSONShape.parse(out)
        #expect(json.keys.sorted() == ["address", "checks", "failed", "passed", "profile", "skipped"])
        #expect(json["profile"]?.string == "mirror-v1")
        #expect(json["address"]?.string == "C0:FF:EE:00:4F:2A")
        let checks = try #require(json["checks"]?.array)
        #expect(checks.count == MirrorChecks.profile.checks.count)
        #expect(json["passed"]?.number == Double(checks.count) && json["failed"]?.number == 0 && json["skipped"]?.number == 0)
        for check in checks {
            #expect(check["result"]?.string == "pass", "\(check["id"]?.string ?? "?"): \(check["message"]?.string ?? "")")
            #expect(check["seconds"]?.number != nil && check["title"]?.string != nil)
        }
        // The ids are the profile's, in its order.
        #expect(checks.compactMap { $0["id"]?.string } == MirrorChecks.profile.checks.map(\.id))
    }

    /// Each way the bench's mirror can depart from the profile is caught by exactly its check,
    /// and the message names what was expected and what was seen.
    @Test(arguments: [
        (MirrorPeripheral.Deviation.noServiceUUID, "adv.service-uuid", "7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00"),
        (.missingCCCD, "gatt.cccd.scale", "0x2902"),
        (.wrongProperty, "gatt.alignment", "saw read"),
        (.outOfRange, "value.deviceInfo", "saw 150"),
        (.wrongErrorCode, "write.token-before-init", "saw ATT error 0x80"),
        (.swappedScanResponse, "adv.form", "Manufacturer Data, Complete Local Name in the advertisement, 128-bit UUIDs in the scan response"),
        (.advertisesWhileConnected, "adv.only-while-disconnected", "saw an advertisement"),
        (.notifiesUnsubscribed, "notify.only-after-cccd", "notified"),
        (.honoursWriteCommand, "write.command-ignored", "saw `scanState` notified state 1"),
        (.wrongLengthCode, "write.token-length", "saw ATT error 0x13"),
        (.confirmsUnaligned, "write.confirm-not-aligned", "saw the write accepted"),
        (.skipsStepOff, "scan.order", "saw warmingUp (1) → ready (2) → scanning (3) → processing (5) → complete (6)"),
        (.slowProcessing, "scan.deadlines", "complete (6) notified within 120 s"),
        (.shortResult, "scan.result", "saw 8:"),
        (.quietScale, "scan.scale-rate", "a second over"),
        (.progressOutsideScan, "scan.progress", "progress 0 in ready (2); saw 50"),
        (.staleAfterDisconnect, "state.disconnect-mid-scan", "saw error (7), progress 0, error 5"),
        (.processesWhileOccupied, "scan.step-off", "processing while the scale still reported someone on it"),
        (.ignoresAbortWhenComplete, "scan.abort-complete", "saw complete (6)"),
    ])
    func eachDeviationFailsExactlyItsCheck(_ deviation: MirrorPeripheral.Deviation, _ check: String, _ words: String) async throws {
        let (code, out, _) = try await run(["check", "--hci", "sim:?deviation=\(deviation.rawValue)", "C0:FF:EE:00:4F:2A",
                                            "--profile", "mirror-v1", "--json"])
        #expect(code == 1)
        let json = try JSONShape.parse(out)
        #expect(Self.failed(json) == [check])
        let message = (json["checks"]?.array ?? []).first { $0["id"]?.string == check }?["message"]?.string ?? ""
        #expect(message.contains("expected") && message.contains(words), "\(message)")
    }

    /// A mirror that goes silent while warming up fails the state checks that wait for its
    /// notifications, and nothing else (a reconnect ends the silence).
    @Test func aSilentMirrorFailsTheStateChecks() async throws {
        let (code, out, _) = try await run(["check", "--hci", "sim:?fault=silence&at=warmingUp", "--json"])
        #expect(code == 1)
        #expect(Self.failed(try JSONShape.parse(out)) == ["state.warm-up", "state.abort"])
    }

    /// A scan whose person (or scale) never does what the next phase waits for fails
    /// `scan.deadlines`, naming the phase and its deadline, and no other check: the checks that
    /// judge the rest of the scan are skipped. On the bench's clock, so minutes take a second.
    @Test(arguments: [
        ("no-scale", "the scale present (`scale` flag bit 0) within 60 s"),
        ("never-aligned", "`alignment` aligned within 120 s"),
        ("never-steps-on", "someone on the scale, stable within 90 s"),
        ("never-steps-off", "the scale reporting not occupied after stepOff within 30 s"),
    ])
    func aPhaseThatNeverEndsFailsTheScanDeadlines(_ fault: String, _ words: String) async throws {
        let (code, out, _) = try await run(["check", "--hci", "sim:?fault=\(fault)", "C0:FF:EE:00:4F:2A", "--profile", "mirror-v1", "--json"])
        #expect(code == 1)
        let json = try JSONShape.parse(out)
        #expect(Self.failed(json) == ["scan.deadlines"])
        let checks = json["checks"]?.array ?? []
        let message = checks.first { $0["id"]?.string == "scan.deadlines" }?["message"]?.string ?? ""
        #expect(message.contains(words), "\(message)")
        #expect(checks.first { $0["id"]?.string == "scan.result" }?["result"]?.string == "skip")
    }

    /// Under 10 % a mirror must refuse to scan with error 6: `scan.order` is skipped saying so,
    /// and nothing fails.
    @Test func aFlatBatteryRefusingTheScanIsNoFailure() async throws {
        var script = MirrorScript()
        script.info.batteryPercent = 5
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: 25), mirrorScript: script)
        let code = await cli.run(["check", "--hci", "sim:", "--json"])
        let json = try JSONShape.parse(captured.stdout)
        #expect(code == 0 && Self.failed(json) == [], "\(captured.stdout)")
        let order = (json["checks"]?.array ?? []).first { $0["id"]?.string == "scan.order" }
        #expect(order?["result"]?.string == "skip")
        #expect(order?["message"]?.string?.contains("battery is at 5 %") == true, "\(order?["message"]?.string ?? "")")
    }

    @Test func theBenchScaleAgainstTheWeightScaleProfile() async throws {
        let (code, out, err) = try await run(["check", "--hci", "sim:", "D4:12:3A:00:18:1D", "--json"])
        #expect(code == 0, "\(err)")
        let json = try JSONShape.parse(out)
        #expect(json["profile"]?.string == "wss")
        #expect(json["passed"]?.number == Double(WeightScaleChecks.wss.checks.count))
    }

    @Test func aDeviceThatIsNotThereIsExitThree() async throws {
        let (code, _, err) = try await run(["check", "--hci", "sim:", "11:22:33:44:55:66"])
        #expect(code == 3)
        #expect(err.contains("11:22:33:44:55:66 not found"))
        let (usage, _, words) = try await run(["check", "--hci", "sim:", "--profile", "nope"])
        #expect(usage == 2 && words.contains("mirror-v1"))
    }

    /// `--report`: one test case per check, in a suite named for the profile.
    @Test func theReportHasOneCasePerCheck() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let junit = directory.appendingPathComponent("mirror.xml").path, tap = directory.appendingPathComponent("mirror.tap").path
        let (code, _, _) = try await run(["check", "--hci", "sim:?deviation=wrong-error-code", "C0:FF:EE:00:4F:2A", "--profile", "mirror-v1",
                                          "--report", "junit:\(junit)", "--report", "tap:\(tap)"])
        #expect(code == 1)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains(#"<testsuite name="mirror-v1" tests="\#(MirrorChecks.profile.checks.count)" failures="1""#))
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == MirrorChecks.profile.checks.count)
        #expect(xml.contains(#"classname="mirror-v1.write.token-before-init""#))
        let lines = try String(contentsOfFile: tap, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("not ok ") }.count == 1)
        #expect(lines.contains("1..\(MirrorChecks.profile.checks.count)"))
    }
}

/// The same checks against bumble's peers: the profiles' independent implementations.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct CheckPeerTests {
    func check(_ peer: PeerProcess, _ extra: [String] = []) async throws -> (Int32, [String: JSONShape]) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty)
            .run(["check", "--hci", peer.tcp.description, peer.address.description, "--json"] + extra)
        return (code, try JSONShape.parse(captured.stdout))
    }

    @Test func bumblesMirrorPassesAndEachOfItsDeviationsFailsItsCheck() async throws {
        let (code, json) = try await check(try await SharedPeers.shared.peer(["--profile", "mirror", "--speed", "10"]))
        #expect(code == 0)
        #expect(CheckCommandTests.failed(json) == [], "\(json)")
        #expect(json["skipped"]?.number == 0, "\(json)")
        let deviations = [("no-service-uuid", "adv.service-uuid"), ("wrong-property", "gatt.deviceInfo"),
                          ("out-of-range", "value.deviceInfo"), ("wrong-error-code", "write.token-before-init"),
                          ("advertises-while-connected", "adv.only-while-disconnected"), ("notifies-unsubscribed", "notify.only-after-cccd"),
                          ("honours-write-command", "write.command-ignored"), ("wrong-length-code", "write.token-length"),
                          ("confirms-unaligned", "write.confirm-not-aligned"), ("skips-step-off", "scan.order"),
                          ("short-result", "scan.result"), ("progress-outside-scan", "scan.progress"),
                          ("stale-after-disconnect", "state.disconnect-mid-scan")]
        // A check spends most of its 12 s in observation windows (silent while connected, nothing
        // before a CCCD write, a Write Command ignored), so the deviations run four at a time, each
        // its own bumble peer and its own hwprobe process: about a quarter of the time one after
        // another took, with the same windows and deadlines.
        let outcomes = try await Self.eachConcurrently(deviations, limit: 4) { pair, _ in
            let peer = try await PeerProcess.start(["--profile", "mirror", "--speed", "10", "--deviation", pair.0])
            defer { peer.stop() }
            let run = try await Self.binary(["check", "--hci", peer.tcp.description, peer.address.description, "--json", "--profile", "mirror-v1"])
            return (run.code, CheckCommandTests.failed(try JSONShape.parse(run.out)), run.err)
        }
        for ((deviation, id), (failing, failed, err)) in zip(deviations, outcomes) {
            #expect(failing == 1, "\(deviation): \(err)")
            #expect(failed == [id], "\(deviation)")
        }
    }

    /// The built hwprobe run as a process on a thread of its own, so several can run at once
    /// without holding the cooperative pool's threads while they wait.
    static func binary(_ arguments: [String]) async throws -> ShellRun.Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try ShellRun.run(hwprobeBinary(), arguments) }) }.start()
        }
    }

    /// `body` for each element, at most `limit` at a time, results in the elements' order.
    static func eachConcurrently<Element: Sendable, Output: Sendable>(
        _ elements: [Element], limit: Int, _ body: @escaping @Sendable (Element, Int) async throws -> Output
    ) async throws -> [Output] {
        try await withThrowingTaskGroup(of: (Int, Output).self) { group in
            var results = [Output?](repeating: nil, count: elements.count)
            var next = 0
            while next < min(limit, elements.count) {
                let index = next
                group.addTask { (index, try await body(elements[index], index)) }
                next += 1
            }
            while let (index, output) = try await group.next() {
                results[index] = output
                if next < elements.count {
                    let index = next
                    group.addTask { (index, try await body(elements[index], index)) }
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }

    @Test func bumblesScalesPassTheSIGProfiles() async throws {
        let (scale, wss) = try await check(try await SharedPeers.shared.peer(["--profile", "scale"]))
        #expect(scale == 0 && wss["profile"]?.string == "wss")
        let (body, bcs) = try await check(try await SharedPeers.shared.peer(["--profile", "bcs"]))
        #expect(body == 0 && bcs["profile"]?.string == "bcs")
    }
}
