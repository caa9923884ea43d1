import HAL
import HALFakes
import Synchronization
import Testing
@testable import Flows

/// Costs bounded before they are paid (issue 15, item 3): a backup whose key derivation would take
/// longer than the flow's limit here is asked about before any password is typed or derived. On
/// the old code the flow asked for the password at once and derived whatever the parameters.
@Suite struct SlowDerivationTests {
    /// A key derivation that costs nothing and counts its calls, so the format's worst parameters
    /// (logN 20, r 8, p 16: 1 GiB and about 37 s each with scrypt) can be used in a test.
    final class InstantDeriver: KeyDeriver {
        private let calls = Mutex(0)
        var callCount: Int { calls.withLock { $0 } }

        func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
            calls.withLock { $0 += 1 }
            return Array(repeating: 7, count: VB1Container.keyLength)
        }
    }

    static let hostile = ScryptParameters(logN: 20, r: 8, p: 16)
    /// The reference two-core speed: 37.6 s for the hostile parameters.
    static let estimate = DerivationTimeEstimate.reference

    static func container(_ deriver: InstantDeriver) throws -> [UInt8] {
        try VB1Container.write(plaintext: Array("{}".utf8), password: "pw", parameters: hostile, deriver: deriver).bytes
    }

    /// The events up to and including the first one `stop` accepts.
    static func events(of flow: BackupDecryptFlow, until stop: (FlowEvent) -> Bool) async -> [FlowEvent] {
        var seen: [FlowEvent] = []
        for await output in flow.outputs {
            guard case .event(let event) = output else { continue }
            seen.append(event)
            if stop(event) { break }
        }
        return seen
    }

    @Test func aSlowBackupIsAskedAboutBeforeAnyPasswordAndContinueLetsItOpen() async throws {
        let deriver = InstantDeriver()
        let bytes = try Self.container(deriver)
        let flow = BackupDecryptFlow(container: bytes, deriver: deriver, timeEstimate: Self.estimate,
                                     slowDerivationLimit: .seconds(30), clock: ManualClock(), motion: .reduced)
        let first = await Self.events(of: flow) { _ in true }
        guard case .slowDerivationAhead(let expected) = first.first else {
            Issue.record("the flow began with \(first), not the question")
            return
        }
        #expect(expected > .seconds(30) && expected < .seconds(45), "\(expected)")
        // Typed before Continue (a stray paste): dropped, nothing derived.
        flow.submit(password: "pw")
        flow.confirmSlowDerivation()
        let next = await Self.events(of: flow) { if case .passwordWanted = $0 { true } else { false } }
        #expect(next.last == .passwordWanted(attempt: 1))
        let calls = deriver.callCount
        #expect(calls == 1, "only the write derived so far")
        flow.submit(password: "pw")
        guard case .decrypted(let plaintext) = await flow.run() else {
            Issue.record("not opened after Continue")
            return
        }
        #expect(plaintext == Array("{}".utf8))
        #expect(deriver.callCount == calls + 1)
    }

    @Test func cancelOnTheQuestionEndsWithoutDeriving() async throws {
        let deriver = InstantDeriver()
        let bytes = try Self.container(deriver)
        let flow = BackupDecryptFlow(container: bytes, deriver: deriver, timeEstimate: Self.estimate,
                                     slowDerivationLimit: .seconds(30), clock: ManualClock(), motion: .reduced)
        flow.dismiss()
        #expect(await flow.run() == .cancelled)
        #expect(deriver.callCount == 1, "only the write derived")
    }

    @Test func withoutALimitOrUnderItThePasswordIsAskedAtOnce() async throws {
        let deriver = InstantDeriver()
        let bytes = try Self.container(deriver)
        for limit in [nil, Duration.seconds(60)] {
            let flow = BackupDecryptFlow(container: bytes, deriver: deriver, timeEstimate: Self.estimate,
                                         slowDerivationLimit: limit, clock: ManualClock(), motion: .reduced)
            let first = await Self.events(of: flow) { _ in true }
            #expect(first == [.passwordWanted(attempt: 1)], "limit \(String(describing: limit))")
            flow.dismiss()
            _ = await flow.run()
        }
    }

    @Test func theEstimateSaysWhatTheHostileParametersCost() {
        #expect(Self.estimate.isSlow(Self.hostile))
        #expect(!Self.estimate.isSlow(.exportDefault))
        #expect(Self.estimate.spokenEstimate(for: Self.hostile) == "about 38 s")
    }
}
