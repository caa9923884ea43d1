import HAL
import Transports

/// One requirement of a profile that a client can observe, as data: an id, a title, how long it
/// may take, and the code that observes it. A profile (`CheckProfile`) is a list of these in the
/// order they run, so it reads like the specification's list.
struct ConformanceCheck: Sendable {
    let id: String
    let title: String
    /// The most the observation may take; past it the check fails, saying so.
    var deadline: Duration = .seconds(10)
    /// Observes the requirement: returns when it holds, throws a `CheckFinding` when it does not
    /// (or cannot be observed on this device).
    let observe: @Sendable (CheckSession) async throws(CheckFinding) -> Void
}

/// Why a check did not pass: what the profile expects and what the device did.
struct CheckFinding: Error, Sendable, Hashable {
    enum Kind: Sendable, Hashable { case fail, skip }
    var kind: Kind
    var message: String

    static func fail(expected: String, seen: String) -> CheckFinding {
        CheckFinding(kind: .fail, message: "expected \(expected); saw \(seen)")
    }

    static func skip(_ reason: String) -> CheckFinding { CheckFinding(kind: .skip, message: reason) }
}

/// A profile's checks, in the order they run.
struct CheckProfile: Sendable {
    let name: String
    let title: String
    let checks: [ConformanceCheck]

    static let all: [CheckProfile] = [MirrorChecks.profile, WeightScaleChecks.wss, WeightScaleChecks.bcs]

    static func named(_ name: String) -> CheckProfile? { all.first { $0.name == name } }

    /// The profile of the driver that claims a device (`--profile` defaults to it).
    static func forDriver(_ id: String?, advertisement: Advertisement) -> CheckProfile? {
        switch id {
        case "mirror-v1": MirrorChecks.profile
        case "standard-scale":
            advertisement.allServiceUUIDs.contains(BluetoothUUID(0x181B)) ? WeightScaleChecks.bcs : WeightScaleChecks.wss
        default: nil
        }
    }
}

/// What one check came to.
struct CheckResult: Sendable, Hashable, Encodable {
    enum Outcome: String, Sendable, Hashable, Encodable { case pass, fail, skip }
    var id: String
    var title: String
    var result: Outcome
    var message: String?
    var seconds: Double
}
