import Foundation
import Testing
@testable import hwprobe

/// `--out` is checked before the camera opens (docs/cli.md).
@Suite struct OutputTargetTests {
    func kind(_ path: String, replacing: Bool = false) -> (CLIFailure.Kind, String)? {
        do { try OutputTarget.check(path, replacing: replacing) } catch { return (error.kind, error.message) }
        return nil
    }

    @Test func whatMayBeWritten() throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        #expect(kind(scratch.path("new.json")) == nil)
        let existing = try scratch.write("old.json", "keep")
        #expect(kind(existing)?.0 == .usage)
        #expect(kind(existing)?.1.contains("--force") == true)
        #expect(kind(existing, replacing: true) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == ["old.json"], "the probe leaves nothing")
    }

    @Test func whatIsRefusedWhateverTheFlags() throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let dangling = scratch.path("dangling")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: scratch.path("nowhere"))
        let fifo = scratch.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, words) in [(dangling, "a symbolic link"), (fifo, "a FIFO"), ("/dev/null", "a character device"),
                              (scratch.directory.path, "a directory")] {
            for replacing in [false, true] {
                let refused = kind(path, replacing: replacing)
                #expect(refused?.0 == .usage, "\(path)")
                #expect(refused?.1.contains(words) == true, "\(refused?.1 ?? "accepted")")
            }
        }
        #expect(kind("/nonexistent/dir/v.json")?.1.contains("/nonexistent/dir does not exist") == true)
        #expect(kind(try scratch.write("file", "x") + "/v.json")?.0 == .usage, "a file is no directory")
        #expect(kind("/proc/x")?.0 == .permission)
        #expect(kind("")?.0 == .usage)
    }

    @Test func aDirectoryWeMayNotWriteIsAPermissionError() throws {
        guard getuid() == 0 else { return }
        // As root permission bits do not stop us; a read-only bind is not available here either,
        // so run the check as nobody in a child process.
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        #expect(chmod(scratch.directory.path, 0o755) == 0)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        child.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", hwprobeBinary(), "import", "--camera", "sim:",
                           "--password-file", "/dev/null", "--out", scratch.path("v.json")]
        let errors = Pipe()
        child.standardError = errors
        child.standardOutput = Pipe()
        try child.run()
        child.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(child.terminationStatus == 3, "\(text)")
        #expect(text.contains("no permission to write in \(scratch.directory.path)"))
    }
}

/// `--btsnoop FILE` follows the same rules as `--out` (issue 15), checked before any controller
/// opens: an existing capture is never truncated, a symbolic link never followed.
@Suite struct BTSnoopTargetTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let cli = HWProbe(console: captured.console, listSources: .empty)
        let code = await cli.run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func anExistingCaptureIsRefusedBeforeTheControllerOpens() async throws {
        let scratch = try ImportCommandTests.Scratch()
        defer { scratch.remove() }
        let existing = try scratch.write("old.btsnoop", "an earlier capture")
        // Port 9 (discard) on loopback: nothing listens, so opening would fail with a device error.
        let result = await run(["list", "--hci", "tcp:127.0.0.1:9", "--btsnoop", existing, "--json"])
        #expect(result.code == 2, "\(result.out) \(result.err)")
        #expect(result.err.contains("--btsnoop"), "\(result.err)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an earlier capture")
        let link = scratch.path("link.btsnoop")
        #expect(symlink(existing, link) == 0)
        let linked = await run(["gatt", "--hci", "tcp:127.0.0.1:9", "C0:FF:EE:00:4F:2A", "--btsnoop", link])
        #expect(linked.code == 2, "\(linked.err)")
        #expect(linked.err.contains("symbolic link"), "\(linked.err)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an earlier capture")
    }
}

/// The built hwprobe next to the test bundle.
func hwprobeBinary() -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    return bundle.appendingPathComponent("hwprobe").path
}
