import HAL

/// How a pairing failed: who said so and why, in words that say what to do.
public struct PairingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// Who ended the pairing and how.
    public enum Cause: Hashable, Sendable {
        /// We sent Pairing Failed with this reason.
        case sent(PairingFailureReason)
        /// The peer sent Pairing Failed with this reason.
        case received(PairingFailureReason)
        /// 30 s passed without the pairing completing (the SMP timeout, Vol 3 Part H §3.4): no
        /// further SMP PDU goes on this link; pairing again needs a new connection.
        case timeout
        /// The link went down mid-pairing.
        case linkLost
        /// The link could not be encrypted with the new key (HCI status).
        case encryptionFailed(status: UInt8)
        /// Refused here before anything was sent (the repeated-attempts wait, a timed-out link).
        case refused(PairingFailureReason)
    }

    /// Who ended the pairing and how.
    public var cause: Cause
    /// What went wrong, for a person.
    public var detail: String

    /// A failure and its explanation.
    public init(_ cause: Cause, _ detail: String) {
        self.cause = cause
        self.detail = detail
    }

    /// The SMP reason, when there is one.
    public var reason: PairingFailureReason? {
        switch cause {
        case .sent(let reason), .received(let reason), .refused(let reason): reason
        case .timeout, .linkLost, .encryptionFailed: nil
        }
    }

    /// `Pairing Failed: 0x04 Confirm Value Failed (sent by the peer: …)`, the contract's form.
    public var description: String {
        switch cause {
        case .sent(let reason): "Pairing Failed: \(reason) (sent by hwprobe: \(detail))"
        case .received(let reason): "Pairing Failed: \(reason) (sent by the peer: \(detail))"
        case .refused(let reason): "Pairing Failed: \(reason) (\(detail))"
        case .timeout: "pairing timed out: \(detail)"
        case .linkLost: "pairing stopped: \(detail)"
        case .encryptionFailed(let status): "pairing failed: encrypting the link failed with HCI status 0x\(Hex.byte(status)) (\(detail))"
        }
    }
}
