import Foundation
import Testing

/// The script the GitCommit build-tool plugin runs before every build (BuildTools/GitCommitPlugin).
enum GitCommitScript {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let script = packageDirectory.appending(path: "BuildTools/GitCommitPlugin/write-commit.sh").path
    static let gitIsInstalled = ShellRun.exists("/usr/bin/git")
    static var packageIsACheckout: Bool {
        FileManager.default.fileExists(atPath: packageDirectory.appending(path: ".git").path)
    }

    /// Runs the script for `package` and returns the generated file's text.
    static func generate(package: URL, output: URL, path: String = "/usr/local/bin:/usr/bin:/bin") throws -> (code: Int32, text: String) {
        let result = try ShellRun.run("/bin/sh", [script, package.path, output.path], environment: ["PATH": path])
        let text = (try? String(contentsOf: output.appending(path: "BuildCommit.swift"), encoding: .utf8)) ?? ""
        return (result.code, text)
    }
}

@Suite struct GitCommitScriptTests {
    let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appending(path: "hwprobe-gitcommit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    func git(_ arguments: [String], in directory: URL) throws -> String {
        let result = try ShellRun.run("/usr/bin/git", ["-c", "user.name=Test", "-c", "user.email=test@example.com",
                                                      "-c", "init.defaultBranch=main", "-C", directory.path] + arguments)
        #expect(result.code == 0, "git \(arguments): \(result.err)")
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A package directory that is a git repository with one commit.
    func makeRepository(at directory: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try git(["init", "-q"], in: directory)
        try "// swift-tools-version: 6.0\n".write(to: directory.appending(path: "Package.swift"), atomically: true, encoding: .utf8)
        _ = try git(["add", "Package.swift"], in: directory)
        _ = try git(["commit", "-q", "-m", "first"], in: directory)
        return try git(["rev-parse", "--short", "HEAD"], in: directory)
    }

    @Test(.enabled(if: GitCommitScript.gitIsInstalled)) func aCheckoutGivesItsShortCommit() throws {
        let package = scratch.appending(path: "package")
        let commit = try makeRepository(at: package)
        let output = scratch.appending(path: "out")
        let generated = try GitCommitScript.generate(package: package, output: output)
        #expect(generated.code == 0)
        #expect(generated.text.contains("let buildCommit: String? = \"\(commit)\"\n"))
        // Nothing is written into the package itself: the tree stays clean.
        #expect(try git(["status", "--porcelain"], in: package).isEmpty)

        // A new commit is picked up by the next build.
        try "let x = 1\n".write(to: package.appending(path: "x.swift"), atomically: true, encoding: .utf8)
        _ = try git(["add", "x.swift"], in: package)
        _ = try git(["commit", "-q", "-m", "second"], in: package)
        let next = try git(["rev-parse", "--short", "HEAD"], in: package)
        #expect(next != commit)
        #expect(try GitCommitScript.generate(package: package, output: output).text.contains("\"\(next)\""))
    }

    @Test(.enabled(if: GitCommitScript.gitIsInstalled)) func anUnchangedCommitLeavesTheFileAlone() throws {
        let package = scratch.appending(path: "package")
        _ = try makeRepository(at: package)
        let output = scratch.appending(path: "out")
        _ = try GitCommitScript.generate(package: package, output: output)
        let file = output.appending(path: "BuildCommit.swift").path
        // An old modification time that a rewrite would replace.
        let old = Date(timeIntervalSince1970: 1_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
        _ = try GitCommitScript.generate(package: package, output: output)
        let after = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        #expect(after == old, "the file was rewritten, so every build would recompile hwprobe")
    }

    @Test func withoutACheckoutThereIsNoCommit() throws {
        let package = scratch.appending(path: "plain")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let generated = try GitCommitScript.generate(package: package, output: scratch.appending(path: "out"))
        #expect(generated.code == 0)
        #expect(generated.text.contains("let buildCommit: String? = nil\n"))
    }

    @Test(.enabled(if: GitCommitScript.gitIsInstalled)) func aPackageInsideAnotherRepositoryDoesNotTakeItsCommit() throws {
        let outer = scratch.appending(path: "outer")
        _ = try makeRepository(at: outer)
        let package = outer.appending(path: "vendor/hwprobe")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let generated = try GitCommitScript.generate(package: package, output: scratch.appending(path: "out"))
        #expect(generated.text.contains("let buildCommit: String? = nil\n"))
    }

    @Test(.enabled(if: GitCommitScript.gitIsInstalled)) func withoutGitOnThePathThereIsNoCommitAndNoFailure() throws {
        let package = scratch.appending(path: "package")
        _ = try makeRepository(at: package)
        // A PATH with the shell's basic tools but no git.
        let tools = scratch.appending(path: "bin")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        for tool in ["cat", "mkdir", "mv", "pwd"] {
            try FileManager.default.createSymbolicLink(atPath: tools.appending(path: tool).path, withDestinationPath: "/bin/\(tool)")
        }
        let generated = try GitCommitScript.generate(package: package, output: scratch.appending(path: "out"), path: tools.path)
        #expect(generated.code == 0)
        #expect(generated.text.contains("let buildCommit: String? = nil\n"))
    }
}
