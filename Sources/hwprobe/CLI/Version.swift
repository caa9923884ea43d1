/// What `hwprobe --version` says. The number is ours to raise with each release; the commit is
/// whatever `git rev-parse --short HEAD` said when this build ran (`buildCommit`, written by the
/// GitCommit build-tool plugin into the build directory, never into the source tree), and nil
/// when the sources were built without git or outside a checkout (a tarball, an export).
enum Version {
    static let number = "0.3.0"
    static let commit: String? = buildCommit

    static var line: String { text(number: number, commit: commit) }

    static func text(number: String, commit: String?) -> String {
        "hwprobe \(number)" + (commit.map { " (commit \($0))" } ?? "")
    }
}
