import Foundation

/// Runs part of a test binary again inside a umockdev testbed: a fixture script under
/// `Tests/Fixtures/umockdev` emulates one device node and starts the child, which is this same
/// test binary filtered to the suites that need the device. Those suites are enabled only
/// when `UMOCKDEV_DIR` is set, so a normal run skips them and runs their launcher instead.
public enum UmockdevBench {
    public static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/umockdev")

    /// True inside the testbed.
    public static var inside: Bool { ProcessInfo.processInfo.environment["UMOCKDEV_DIR"] != nil }

    /// True where a launcher can start a testbed (umockdev and the system Python with GI).
    public static var available: Bool {
        !inside && FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-wrapper")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    public struct Outcome: Sendable {
        public var status: Int32
        public var output: String
        /// Whether swift-testing reported the named test as passed.
        public func passed(_ test: String) -> Bool { output.contains("\(test)() passed") }
    }

    /// Runs `script DEVICE_FILE ARGS… -- <this test binary> --filter FILTER` under umockdev-wrapper.
    public static func run(script: String, device: String, arguments: [String] = [], filter: String,
                           environment extra: [String: String] = [:]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/umockdev-wrapper")
        let binary = ProcessInfo.processInfo.arguments[0]
        process.arguments = ["/usr/bin/python3", fixtures.appendingPathComponent(script).path,
                             fixtures.appendingPathComponent(device).path] + arguments
            + ["--", binary, "--testing-library", "swift-testing", "--filter", filter]
        var environment = ProcessInfo.processInfo.environment
        // A crashed testbed leaves its directory behind: keep it out of /tmp's way.
        environment["TMPDIR"] = FileManager.default.temporaryDirectory.path
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: text)
    }
}
