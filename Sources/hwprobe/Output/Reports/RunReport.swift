import Foundation

/// What a run of hwprobe found, as test results a CI server reads (`--report junit:FILE`,
/// `--report tap:FILE`): one suite (a command's run, or a `check` profile) of cases, each passed,
/// failed with its reason, or skipped with why.
///
/// A plain value: the writers (`JUnitReport`, `TAPReport`) are pure functions of it, so tests read
/// exactly the bytes a CI server gets.
struct RunReport: Sendable, Hashable {
    struct Case: Sendable, Hashable {
        enum Result: Sendable, Hashable {
            case passed
            /// `kind` is a machine-readable class of failure (the contract's error kind, e.g.
            /// `timedOut`), `message` what was expected and what was seen.
            case failed(kind: String, message: String)
            case skipped(reason: String)
        }

        /// A stable identifier (`scan`, `mirror-v1.adv.service-uuid`): JUnit's `classname`.
        var id: String
        /// What a person reads: JUnit's `name`, TAP's description.
        var title: String
        var result: Result
        var seconds: Double
    }

    /// The suite's name: `hwprobe scan`, or a profile's name.
    var suite: String
    /// When the run started (UTC), and on which host.
    var started: Date
    var hostname: String
    /// The command line as typed, for finding the run again.
    var commandLine: String
    /// Which devices the run used, for a lab with many identical ones: `device` as typed,
    /// `device.id` the identity `list` gives it (issue 19, item 5), `peripheral` the BLE address.
    /// JUnit `property` elements, TAP comment lines.
    var properties: [Property] = []

    struct Property: Sendable, Hashable {
        var name: String
        var value: String
    }
    var cases: [Case]

    var failures: Int { cases.filter { if case .failed = $0.result { true } else { false } }.count }
    var skips: Int { cases.filter { if case .skipped = $0.result { true } else { false } }.count }
    var seconds: Double { cases.reduce(0) { $0 + $1.seconds } }
}
