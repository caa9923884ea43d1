import Foundation
import Testing
@testable import hwprobe

/// The drivers against devices recorded from the bumble peers (issue 17: peer tests turned into
/// cassette tests). These three were live peer tests in `DriverPeerTests`; the cassettes are the
/// same sessions (`CassettePeerTests` records them against the live peers on every run and
/// checks the replay agrees), so what they prove is kept and each takes a fraction of a second
/// with no peer to start: a standard scale's series ends in the exact weight, a two-packet Body
/// Composition Measurement is reassembled, a broadcasting Mi scale is read without connecting.
@Suite struct DriverCassetteTests {
    static let address = "B0:B0:B0:00:00:01"

    func weigh(_ name: String) async throws -> [String: JSONShape] {
        let replay = await CassetteCLI(speed: 25).run(["weigh", "--hci", "replay:\(CassetteCLI.fixtures)/\(name).cassette",
                                                       Self.address, "--timeout", "20", "--json"])
        #expect(replay.code == 0, "\(replay.err.suffix(600))")
        #expect(!replay.err.contains("hwprobe: replay:"), "a replay that needed a warning: \(replay.err)")
        return try JSONShape.parse(replay.out)
    }

    @Test func theStandardScalesSeriesEndsInItsExactWeight() async throws {
        // Recorded: 70.0, 72.3, 72.35 indicated on subscription, then 72.35 again; no stable flag,
        // so the same weight twice in a row is the stable one.
        let json = try await weigh("peer-scale-weigh")
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "standard-scale")
        #expect(json["address"]?.string == Self.address)
    }

    @Test func aTwoPacketBodyCompositionMeasurementIsReassembled() async throws {
        let cassette = try String(contentsOfFile: CassetteCLI.fixtures + "/peer-bcs-weigh.cassette", encoding: .utf8)
        // Body Composition Measurement (2A9C, value handle 0x0012) indications: the peer's
        // measurement is two of them.
        #expect(cassette.contains("characteristic 0x0012 0x20 2A9C"))
        #expect(cassette.split(separator: "\n").filter { $0.contains(" < 1d1200") }.count == 2, "the recording holds the two-packet measurement")
        let json = try await weigh("peer-bcs-weigh")
        #expect(json["driver"]?.string == "standard-scale")
        #expect(json["weightKg"]?.number == 72.35)
    }

    @Test func aBroadcastingMiScaleIsReadWithoutConnecting() async throws {
        let cassette = try String(contentsOfFile: CassetteCLI.fixtures + "/peer-miscale-weigh.cassette", encoding: .utf8)
        #expect(!cassette.contains("\nconnection "), "the live session never connected")
        let json = try await weigh("peer-miscale-weigh")
        #expect(json["weightKg"]?.number == 72.35)
        #expect(json["driver"]?.string == "mi-scale")
    }
}
