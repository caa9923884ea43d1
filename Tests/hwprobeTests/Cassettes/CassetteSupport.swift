import Foundation
import HAL
import HALFakes
@testable import hwprobe

/// Runs hwprobe on the simulated bench sped up (or on a cassette, at the same speed), and
/// compares JSON objects with the timings taken out.
struct CassetteCLI {
    var speed = 25.0
    var script = MirrorScript()

    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        var cli = HWProbe(console: captured.console, listSources: .empty)
        cli.bench = SimulatedBench(clock: ScaledClock(speed: speed), mirrorScript: script)
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    /// A path in a fresh directory of its own, removed by `cleanup`.
    static func temporaryPath(_ name: String = "session.cassette") -> (path: String, cleanup: @Sendable () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-cassette-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (directory.appendingPathComponent(name).path, { try? FileManager.default.removeItem(at: directory) })
    }

    /// The JSON object with the keys that hold timings (`t`, `seconds`) and RSSI removed at any depth:
    /// what a live run and its replay must agree on.
    static func withoutTimings(_ text: String) -> NSObject? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
        return strip(value) as? NSObject
    }

    private static func strip(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { !["t", "seconds", "rssi"].contains($0.key) }.mapValues(strip)
        }
        if let array = value as? [Any] { return array.map(strip) }
        return value
    }

    /// Where the committed cassettes are (Tests/Fixtures/cassettes).
    static var fixtures: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cassettes").path
    }
}
