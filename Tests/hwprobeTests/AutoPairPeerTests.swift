import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `gatt` and `weigh` (central, in this process) pairing on their own against `hwprobe serve`
/// (the real binary, peripheral) on two controllers of one bumble link: a value that needs
/// encryption is refused with 0x0F, the command pairs and reads it again; the next run encrypts
/// with the bond and does not pair; a device that refuses pairing ends the command with exit 1
/// and the reason; `weigh --pair` pairs before it weighs.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct AutoPairPeerTests {
    /// A thermometer whose 2A6F needs an encrypted link (docs/serve-profile.md).
    static func profile() throws -> String {
        let path = FileManager.default.temporaryDirectory.appending(path: "autopair-\(UUID().uuidString).json").path
        try Data("""
        {"name": "Locked Thermo", "address": "C4:12:34:56:78:9B",
         "advertising": {"form": "extended", "serviceUUIDs": ["181A"]},
         "services": [{"uuid": "181A", "characteristics": [
            {"uuid": "2A6E", "properties": ["read"], "value": "0a01"},
            {"uuid": "2A6F", "properties": ["read"], "value": "3200", "security": {"read": "encrypted"}}]}]}
        """.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A scratch XDG_STATE_HOME and the thermometer's profile, served with `--pairing MODE`
    /// on the first controller of the link once it advertises.
    struct Bench {
        let state: String
        let profile: String
        let serving: Serving

        static func serving(pairing: String, _ extra: [String] = []) async throws -> (CentralPeer, Bench) {
            let central = try await ServePeerTests.central.value
            let state = FileManager.default.temporaryDirectory.appending(path: "autopair-\(UUID().uuidString)").path
            let profile = try AutoPairPeerTests.profile()
            let serving = try Serving(["--hci", central.hosts[0].description, "profile:\(profile)", "--pairing", pairing] + extra,
                                      environment: ["XDG_STATE_HOME": state])
            #expect(await serving.line(containing: "\"advertising\"") != nil, "\(serving.all)")
            return (central, Bench(state: state, profile: profile, serving: serving))
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: state)
            try? FileManager.default.removeItem(atPath: profile)
        }
    }

    static func run(_ arguments: [String], state: String) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func gattPairsWhenRefusedWithInsufficientEncryptionAndTheNextRunUsesTheBond() async throws {
        let (central, bench) = try await Bench.serving(pairing: "optional")
        defer { bench.remove() }
        let (state, serving) = (bench.state, bench.serving)
        let read = ["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json"]

        let first = await Self.run(read, state: state)
        #expect(first.code == 0, "\(first.out)\(first.err)")
        #expect(first.out.contains("3200"), "\(first.out)")
        #expect(first.err.contains("\"event\":\"paired\"") && first.err.contains("\"method\":\"just-works\""), "\(first.err)")
        #expect(!first.err.contains("ltk\":\""), "a key value was printed")
        #expect(await serving.line(containing: "\"paired\"") != nil, "\(serving.all)")
        _ = await serving.line(containing: "\"encrypted\"")
        let pairedBefore = serving.all.filter { $0.contains("\"paired\"") }.count

        // Met again: encrypted with the bond's key as it connects, the value read at once.
        let second = await Self.run(read, state: state)
        #expect(second.code == 0, "\(second.out)\(second.err)")
        #expect(second.out.contains("3200"), "\(second.out)")
        #expect(second.err.contains("\"event\":\"encrypted\"") && !second.err.contains("\"paired\""), "\(second.err)")
        #expect(serving.stop().code == 0)
        #expect(serving.all.filter { $0.contains("\"paired\"") }.count == pairedBefore, "the served side paired again: \(serving.all)")
        #expect(serving.all.filter { $0.contains("\"encrypted\"") }.count >= 2, "\(serving.all)")
    }

    /// `serve replay:` of a recording made while pairing, with `--pairing optional`: hwprobe's
    /// `gatt` on the other controller is refused as the device refused it, pairs with serve for
    /// real, and reads the recorded value.
    @Test func serveReplayGivesARecordedProtectedValueOnlyAfterTheCentralPairs() async throws {
        let (central, bench) = try await Bench.serving(pairing: "optional")
        defer { bench.remove() }
        try FileManager.default.createDirectory(atPath: bench.state, withIntermediateDirectories: true)
        let cassette = bench.state + "/paired.cassette"
        let live = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F",
                                   "--record", cassette], state: bench.state)
        #expect(live.code == 0, "\(live.out)\(live.err)")
        #expect(bench.serving.stop().code == 0)

        let replayState = bench.state + "/replay"
        let serving = try Serving(["--hci", central.hosts[0].description, "replay:" + cassette, "--pairing", "optional"],
                                  environment: ["XDG_STATE_HOME": replayState + "-serve"])
        #expect(await serving.line(containing: "\"advertising\"") != nil, "\(serving.all)")
        let read = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json", "-v"],
                                  state: replayState)
        #expect(read.code == 0, "\(read.out)\(read.err)")
        #expect(read.out.contains("3200"), "\(read.out)")
        #expect(read.err.contains("0x0F Insufficient Encryption"), "refused first, as the device refused it: \(read.err)")
        #expect(read.err.contains("\"event\":\"paired\""), "\(read.err)")
        // Met again: encrypted with the bond as it connects, so the value comes with no refusal.
        let again = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json", "-v"],
                                   state: replayState)
        #expect(again.code == 0, "\(again.out)\(again.err)")
        #expect(again.out.contains("3200"), "\(again.out)")
        #expect(again.err.contains("\"event\":\"encrypted\"") && !again.err.contains("Insufficient Encryption"), "\(again.err)")
        #expect(serving.stop().code == 0)
    }

    /// Issue 29, cassettes: `serve --record` keeps the pairing a central made with it from the
    /// served side (method, Secure Connections, the kinds each side sent; never a key), and that
    /// recording still serves the protected value with `serve replay:` to a central that pairs.
    @Test func serveRecordKeepsThePairingFromTheServedSideAndReplays() async throws {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "autopair-rec-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let cassette = scratch + "/served.cassette"
        let (central, bench) = try await Bench.serving(pairing: "optional", ["--record", cassette])
        defer { bench.remove() }
        let read = ["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json"]
        let live = await Self.run(read, state: bench.state)
        #expect(live.code == 0 && live.out.contains("3200"), "\(live.out)\(live.err)")
        _ = await bench.serving.line(containing: "\"paired\"")
        #expect(bench.serving.stop().code == 0)

        let recorded = try String(contentsOfFile: cassette, encoding: .utf8)
        let lines = recorded.split(separator: "\n")
        #expect(lines.first == "hwprobe-cassette 1.2", "\(recorded)")
        let pairing = try #require(lines.first { $0.hasPrefix("pairing ") }, "\(recorded)")
        let words = pairing.split(separator: " ")
        #expect(words.count == 6 && words[2] == "just-works" && words[3] == "sc", "\(pairing)")
        // Kinds only: every key word is a kind name or `-`, never hex.
        let kinds = Set(BLECassette.SecurityRecord.keyKinds + ["-"])
        #expect(words.dropFirst(4).allSatisfy { $0.split(separator: ",").allSatisfy { kinds.contains(String($0)) } }, "\(pairing)")
        #expect(lines.contains { $0.hasPrefix("encrypted ") }, "\(recorded)")

        let serving = try Serving(["--hci", central.hosts[0].description, "replay:" + cassette, "--pairing", "optional"],
                                  environment: ["XDG_STATE_HOME": scratch + "/replay-serve"])
        #expect(await serving.line(containing: "\"advertising\"") != nil, "\(serving.all)")
        let again = await Self.run(read, state: scratch + "/replay")
        #expect(again.code == 0 && again.out.contains("3200"), "\(again.out)\(again.err)")
        #expect(serving.stop().code == 0)
    }

    /// Issue 29, item 3: `gatt --read` of the protected value recorded while it paired, then
    /// replayed with no device and no bond: the replay's simulated pairing by the recorded method
    /// gives the live run's value, and no bond is written for the replay's controller.
    @Test func aRecordingOfGattPairingReplaysToTheSameValueWithASimulatedPairing() async throws {
        let (central, bench) = try await Bench.serving(pairing: "optional")
        defer { bench.remove() }
        try FileManager.default.createDirectory(atPath: bench.state, withIntermediateDirectories: true)
        let cassette = bench.state + "/paired.cassette"
        let live = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json",
                                   "--record", cassette], state: bench.state)
        #expect(live.code == 0, "\(live.out)\(live.err)")
        #expect(bench.serving.stop().code == 0)
        let recorded = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(recorded.contains("pairing ") && recorded.contains("just-works sc") && recorded.contains("encrypted "), "\(recorded)")

        let replayState = bench.state + "/replay"
        let replayed = await Self.run(["gatt", "--hci", "replay:" + cassette, "C4:12:34:56:78:9B/random", "--read", "2A6F", "--json"],
                                      state: replayState)
        #expect(replayed.code == 0, "\(replayed.out)\(replayed.err)")
        #expect(replayed.out.contains("3200"), "\(replayed.out)")
        #expect(replayed.err.contains("\"event\":\"paired\"") && replayed.err.contains("\"method\":\"just-works\""), "\(replayed.err)")
        #expect(!FileManager.default.fileExists(atPath: replayState + "/hwprobe/bonds"), "a replay's pairing was kept in the bond store")
    }

    @Test func aDeviceThatRefusesPairingEndsGattWithExitOneAndTheReason() async throws {
        let (central, bench) = try await Bench.serving(pairing: "off")
        defer { bench.remove() }
        let (state, serving) = (bench.state, bench.serving)
        let refused = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6F"], state: state)
        #expect(refused.code == 1, "\(refused.out)\(refused.err)")
        #expect(refused.err.contains("Pairing Failed: 0x05 Pairing Not Supported"), "\(refused.err)")
        let stores = (try? FileManager.default.contentsOfDirectory(atPath: state + "/hwprobe/bonds")) ?? []
        #expect(stores.allSatisfy { !(FileManager.default.contents(atPath: state + "/hwprobe/bonds/" + $0).map { String(decoding: $0, as: UTF8.self) }?
            .contains("C4:12:34:56:78:9B") ?? false) }, "a failed pairing stored a bond")
        #expect(serving.stop().code == 0)
    }

    /// `serve --pairing required`: bumble's central gets its MTU but nothing else before the link
    /// is encrypted; hwprobe's `gatt` is refused with 0x0F, pairs on its own and reads.
    @Test func servePairingRequiredServesNothingButMTUUntilTheLinkIsEncrypted() async throws {
        let (central, bench) = try await Bench.serving(pairing: "required")
        defer { bench.remove() }
        let (state, serving) = (bench.state, bench.serving)
        // bumble's central does not pair: its MTU is exchanged, its discovery finds nothing.
        try await central.command(["cmd": "connect", "address": "C4:12:34:56:78:9B/random", "timeout": 5])
        #expect(try await central.command(["cmd": "mtu", "mtu": 247])["mtu"] as? Int == 247)
        let discovered = try? await central.command(["cmd": "discover"])
        #expect((discovered?["characteristics"] as? [Any])?.isEmpty ?? true, "\(discovered ?? [:])")
        try await central.command(["cmd": "disconnect"])
        #expect(!serving.all.contains { $0.contains("\"read\"") }, "a value was read before pairing: \(serving.all)")
        _ = await serving.line(containing: "\"advertising\"")

        // hwprobe's gatt: its first discovery request is refused, it pairs, it reads.
        let read = await Self.run(["gatt", "--hci", central.hosts[1].description, "C4:12:34:56:78:9B/random", "--read", "2A6E", "--json", "-v"],
                                  state: state)
        #expect(read.code == 0, "\(read.out)\(read.err)")
        #expect(read.out.contains("0a01"), "\(read.out)")
        #expect(read.err.contains("ATT error 0x0F Insufficient Encryption for Read By Group Type"), "\(read.err)")
        #expect(read.err.contains("\"event\":\"paired\""), "\(read.err)")
        #expect(serving.stop().code == 0)
    }

    /// `check --pair` against a mirror that refuses pairing: exit 1 with the reason (not 3, a
    /// device that could not be reached), and no check runs.
    @Test func checkWithPairAgainstADeviceThatRefusesPairingExitsOneWithTheReason() async throws {
        let central = try await ServePeerTests.central.value
        let state = FileManager.default.temporaryDirectory.appending(path: "autopair-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let serving = try Serving(["--hci", central.hosts[0].description, "mirror-v1?advertising=extended"], environment: ["XDG_STATE_HOME": state])
        #expect(await serving.line(containing: "\"advertising\"") != nil, "\(serving.all)")
        let checked = await Self.run(["check", "--hci", central.hosts[1].description, ServePeerTests.mirror, "--profile", "mirror-v1", "--pair"],
                                     state: state)
        #expect(checked.code == 1, "\(checked.out)\(checked.err)")
        #expect(checked.err.contains("Pairing Failed: 0x05 Pairing Not Supported"), "\(checked.err)")
        #expect(!checked.out.contains("passed"), "\(checked.out)")
        #expect(serving.stop().code == 0)
    }

    @Test func weighWithPairPairsBeforeItWeighs() async throws {
        let central = try await ServePeerTests.central.value
        let state = FileManager.default.temporaryDirectory.appending(path: "autopair-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended",
                                   "--pairing", "optional"], environment: ["XDG_STATE_HOME": state])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let weighed = await Self.run(["weigh", "--hci", central.hosts[1].description, address, "--pair", "--json"], state: state)
        #expect(weighed.code == 0, "\(weighed.out)\(weighed.err)")
        #expect(weighed.out.contains("81.5"), "\(weighed.out)")
        #expect(weighed.err.contains("\"event\":\"paired\""), "\(weighed.err)")
        #expect(await serving.line(containing: "\"paired\"") != nil, "\(serving.all)")
        #expect(serving.stop().code == 0)
    }
}
