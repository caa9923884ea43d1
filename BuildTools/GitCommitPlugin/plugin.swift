import Foundation
import PackagePlugin

/// Gives hwprobe the git commit it was built from, for `hwprobe --version`, without touching
/// the source tree: before every build `write-commit.sh` (beside this file) writes
/// `BuildCommit.swift` into the plugin's work directory under `.build`, which SwiftPM compiles
/// into the target. A prebuild command (not a build command) because the commit changes without
/// any input file SwiftPM could watch; the script rewrites the file only when the commit changed.
@main struct GitCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let script = context.package.directoryURL.appending(path: "BuildTools/GitCommitPlugin/write-commit.sh")
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        // git is looked up on the PATH the build runs with, and reads the user's config (a
        // safe.directory entry) from HOME; anything missing just means no commit.
        let environment = ProcessInfo.processInfo.environment.filter { ["PATH", "HOME"].contains($0.key) }
        return [.prebuildCommand(displayName: "Recording the git commit for hwprobe --version",
                                 executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: [script.path, context.package.directoryURL.path, output.path],
                                 environment: environment,
                                 outputFilesDirectory: output)]
    }
}
