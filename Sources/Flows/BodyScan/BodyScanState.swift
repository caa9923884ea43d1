/// The body-scan flow's states, in the order a good scan visits them (docs/flows.md §3). Their raw
/// values are the names `hwprobe scan --json` reports in `states`.
package enum BodyScanState: String, CaseIterable, Hashable, Sendable {
    case connecting, selectMirror, waitForScale, preflight, alignScale, confirmAlignment, warmingUp,
         phoneDown, countdown, scanning, stepOff, processing, complete, failed

    package var isTerminal: Bool { self == .complete || self == .failed }
}

/// Why a scan failed, as the contract names it.
package struct BodyScanFailure: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: String, Hashable, Sendable {
        case mirrorError, timedOut, disconnected, preflight, notFound
    }

    package var reason: Reason
    /// The mirror's error code for `.mirrorError`.
    public var code: UInt8?
    /// What happened, in words for the person at the bench.
    public var message: String
    /// What to do about it (the tip for a mirror error code, or a next step).
    package var tip: String
    /// Where the flow was when it failed.
    public var state: BodyScanState

    package init(reason: Reason, code: UInt8? = nil, message: String, tip: String, state: BodyScanState) {
        self.reason = reason
        self.code = code
        self.message = message
        self.tip = tip
        self.state = state
    }

    /// The message and the tip as one sentence pair, as a log or the CLI prints a failure.
    public var description: String { "\(message) \(tip)" }
}

/// How one run of the flow ended, with every state it entered (the last included).
package struct BodyScanOutcome: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable { case complete, failed, cancelled }

    /// Whether the scan completed, failed or was cancelled.
    public var kind: Kind
    /// Every state entered, in order; a test or `--json` report compares it with the expected path.
    public var states: [BodyScanState]
    /// The measurements, present only when `kind` is `.complete`.
    public var result: ScanResult?
    /// Why it failed, present only when `kind` is `.failed`.
    public var failure: BodyScanFailure?
    /// The mirror the scan used, once it had chosen one (reports name it even when not typed).
    public var mirror: BLEAddress?

    package init(kind: Kind, states: [BodyScanState], result: ScanResult? = nil, failure: BodyScanFailure? = nil) {
        self.kind = kind
        self.states = states
        self.result = result
        self.failure = failure
    }
}

import HAL
