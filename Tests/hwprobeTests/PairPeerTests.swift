import Foundation
import HAL
import PeerSupport
import Testing
@testable import hwprobe

/// `hwprobe pair` (central, in this process) against `hwprobe serve --pairing required` (the real
/// binary, peripheral) on two controllers of one bumble link: both ends are our host, but each
/// side's Security Manager only learns the other's PDUs through bumble's controllers, and the bond
/// stores are real files in a scratch XDG_STATE_HOME.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PairPeerTests {
    @Test func justWorksBondsBothSidesAndTheServeSideReportsIt() async throws {
        let central = try await ServePeerTests.central.value
        let state = FileManager.default.temporaryDirectory.appending(path: "pair-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended",
                                   "--pairing", "required"], environment: ["XDG_STATE_HOME": state])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: captured.console, listSources: .empty)
            .run(["pair", "--hci", central.hosts[1].description, address, "--json"])
        #expect(code == 0, "\(captured.stdout)\(captured.stderr)")
        let json = try JSONShape.parse(captured.stdout)
        #expect(json["method"]?.string == "just-works", "\(captured.stdout)")
        #expect(captured.stdout.contains("\"bonded\":true"), "\(captured.stdout)")
        #expect(!captured.stdout.contains("ltk\":\""), "a key value was printed")
        let paired = await serving.line(containing: "\"paired\"")
        #expect(paired?.contains("just-works") == true, "\(serving.all)")
        #expect(await serving.line(containing: "\"encrypted\"") != nil, "\(serving.all)")
        // Both stores hold one file each, private to the user.
        let stores = try FileManager.default.contentsOfDirectory(atPath: state + "/hwprobe/bonds")
        #expect(stores.count == 2, "\(stores)")
        // bonds lists both controllers' stores (key kinds, never values), and forgets on --remove.
        let listing = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        #expect(await HWProbe(console: listing.console, listSources: .empty).run(["bonds", "--json"]) == 0, "\(listing.stderr)")
        #expect(listing.stdout.components(separatedBy: "\"identity\"").count == 3, "\(listing.stdout)")
        #expect(listing.stdout.contains("\"identity\":\"\(address)\""), "\(listing.stdout)")
        #expect(listing.stdout.contains("\"keys\":[\"ltk\"]"), "\(listing.stdout)")
        let removing = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        #expect(await HWProbe(console: removing.console, listSources: .empty)
            .run(["bonds", "--hci", central.hosts[1].description, "--remove", address, "--json"]) == 0, "\(removing.stderr)")
        #expect(removing.stdout.contains("\"bonds\":[]") && !removing.stdout.contains(address), "\(removing.stdout)")
        #expect(serving.stop().code == 0)
    }

    /// `pair --record`: the cassette says the pairing happened (method, key kinds) and the link
    /// was encrypted, never a key; `pair --hci replay:` of it pairs as recorded, simulated, and
    /// keeps nothing in the bond store.
    @Test func pairRecordsThePairingAndItsReplayPairsAsRecorded() async throws {
        let central = try await ServePeerTests.central.value
        let state = FileManager.default.temporaryDirectory.appending(path: "pair-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended",
                                   "--pairing", "optional"], environment: ["XDG_STATE_HOME": state])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)
        let cassette = state + "/pair.cassette"
        let live = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: live.console, listSources: .empty)
            .run(["pair", "--hci", central.hosts[1].description, address, "--record", cassette, "--json"])
        #expect(code == 0, "\(live.stdout)\(live.stderr)")
        #expect(serving.stop().code == 0)
        let recorded = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(recorded.contains(" just-works sc ") && recorded.contains("\nencrypted "), "\(recorded)")

        let replayState = state + "/replay"
        let replay = CapturedConsole(environment: ["XDG_STATE_HOME": replayState])
        let replayed = await HWProbe(console: replay.console, listSources: .empty).run(["pair", "--hci", "replay:" + cassette, address, "--json"])
        #expect(replayed == 0, "\(replay.stdout)\(replay.stderr)")
        #expect(try JSONShape.parse(replay.stdout)["method"]?.string == "just-works", "\(replay.stdout)")
        #expect(!FileManager.default.fileExists(atPath: replayState + "/hwprobe/bonds"), "a replay's pairing was kept in the bond store")
    }

    /// Both sides type the same passkey (`--io keyboard --passkey`): an authenticated SC bond; a
    /// different passkey then fails with Confirm Value Failed (0x04), exit 1, and no bond store changes.
    @Test func passkeyEntryBondsWithTheSamePasskeyAndFailsWithAnother() async throws {
        let central = try await ServePeerTests.central.value
        let state = FileManager.default.temporaryDirectory.appending(path: "pair-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let serving = try Serving(["--hci", central.hosts[0].description, "standard-scale?weight=81.5&advertising=extended",
                                   "--pairing", "optional", "--io", "keyboard", "--passkey", "123456"], environment: ["XDG_STATE_HOME": state])
        let advertising = try #require(await serving.line(containing: "\"advertising\""))
        let address = try #require(try JSONShape.parse(advertising)["address"]?.string)

        let right = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: right.console, listSources: .empty)
            .run(["pair", "--hci", central.hosts[1].description, address, "--io", "keyboard", "--passkey", "123456", "--json"])
        #expect(code == 0, "\(right.stdout)\(right.stderr)")
        #expect(try JSONShape.parse(right.stdout)["method"]?.string == "passkey", "\(right.stdout)")
        let bonds = state + "/hwprobe/bonds"
        func stores() -> [String: Data] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: bonds)) ?? []
            return Dictionary(uniqueKeysWithValues: names.compactMap { name in
                FileManager.default.contents(atPath: bonds + "/" + name).map { (name, $0) }
            })
        }
        // The served side keeps its bond when its own side of the pairing ends, which may be a
        // moment after the central's command has returned: its `paired` line says when.
        #expect(await serving.line(containing: "\"paired\"") != nil, "\(serving.all)")
        _ = await serving.line(containing: "\"encrypted\"")
        let before = stores()
        #expect(before.count == 2, "\(before.keys)")

        // A new pairing with the wrong passkey: it fails, and no store changes.
        let wrong = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let failed = await HWProbe(console: wrong.console, listSources: .empty)
            .run(["pair", "--hci", central.hosts[1].description, address, "--io", "keyboard", "--passkey", "654321"])
        #expect(failed == 1, "\(wrong.stdout)\(wrong.stderr)")
        #expect(wrong.stderr.contains("0x04 Confirm Value Failed"), "\(wrong.stderr)")
        #expect(stores() == before, "a failed pairing changed a bond store")
        #expect(serving.stop().code == 0)
    }
}
