import Foundation
import Testing
@testable import hwprobe

/// The committed cassettes (Tests/Fixtures/cassettes, recorded against the bumble peers and the
/// simulated bench) replayed with no peer and no bench: each command gives the JSON its live run
/// gave (the `.json` beside it), timings aside, with no warning — the mirror's scan token is
/// marked `varying` in its cassettes.
@Suite struct CassetteFixtureTests {
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var command: [String]
        var exitCode: Int32 = 0
        var testDescription: String { name }
    }

    static let peer = "B0:B0:B0:00:00:01"
    static let fixtures: [Fixture] = [
        Fixture(name: "peer-scale-weigh", command: ["weigh", "--hci", "URI", peer, "--timeout", "20", "--json"]),
        Fixture(name: "peer-bcs-weigh", command: ["weigh", "--hci", "URI", peer, "--timeout", "20", "--json"]),
        Fixture(name: "peer-miscale-weigh", command: ["weigh", "--hci", "URI", peer, "--timeout", "20", "--json"]),
        Fixture(name: "peer-mirror-scan", command: ["scan", "--hci", "URI", "--yes", "--json"]),
        Fixture(name: "peer-mirror-scan-user-moved", command: ["scan", "--hci", "URI", "--yes", "--json"], exitCode: 1),
        Fixture(name: "peer-mirror-gatt", command: ["gatt", "--hci", "URI", peer, "--read", "all", "--json"]),
        Fixture(name: "peer-generic-gatt", command: ["gatt", "--hci", "URI", peer, "--read", "all", "--json"]),
        Fixture(name: "sim-weigh", command: ["weigh", "--hci", "URI", "--json"]),
        Fixture(name: "sim-scan", command: ["scan", "--hci", "URI", "--yes", "--json"]),
        Fixture(name: "sim-scale-gatt", command: ["gatt", "--hci", "URI", "D4:12:3A:00:18:1D", "--read", "all", "--json"]),
    ]

    @Test(arguments: fixtures)
    func aCommittedCassetteReplaysToItsLiveJSON(_ fixture: Fixture) async throws {
        let base = CassetteCLI.fixtures + "/" + fixture.name
        let expected = try String(contentsOfFile: base + ".json", encoding: .utf8)
        let replay = await CassetteCLI(speed: 25).run(fixture.command.map { $0 == "URI" ? "replay:\(base).cassette" : $0 })
        #expect(replay.code == fixture.exitCode, "\(replay.err.suffix(600))")
        #expect(CassetteCLI.withoutTimings(replay.out) != nil)
        #expect(CassetteCLI.withoutTimings(replay.out) == CassetteCLI.withoutTimings(expected), "replay: \(replay.out)")
        #expect(!replay.err.contains("hwprobe: replay:"), "\(replay.err)")
    }
}
