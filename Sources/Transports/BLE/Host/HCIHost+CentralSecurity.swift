import BLEProtocol
import HAL

/// Securing a central's links on their own, as ``CentralSecurityPolicy`` says (issue 29: `gatt`,
/// `weigh`, `scan` and `check` pair when a device asks for it, in one place rather than four):
/// on connecting, a bonded device is encrypted with its stored key (or any device paired first,
/// `--pair`); afterwards a request the device refuses for want of security secures the link as
/// ``SecurityRemedy`` decides and is sent once more (``ATTBearer/request(_:)``).
extension HCIHost {
    /// As a central link opens: gives its bearer the remedy when the policy asks for one.
    func installSecurityRemedy(_ connection: BLEConnection) {
        guard let policy = hostSecurity?.central, policy.remediesRefusals, securedLinks[connection.handle] != nil else { return }
        connection.bearer.setSecurityRemedy { [weak self, weak connection] (failure: ATTFailure) async throws(BLEError) -> Bool in
            guard let self, let connection else { return false }
            return try await self.remedy(failure, on: connection)
        }
    }

    /// Once a central link is up, before the caller has it: pairs (`pairsOnConnect`), or
    /// encrypts a bonded device with its key. Throws when that failed (the caller disconnects).
    func secureOnConnect(_ connection: BLEConnection) async throws(BLEError) {
        guard let hostSecurity, let link = securedLinks[connection.handle] else { return }
        let policy = hostSecurity.central
        if policy.pairsOnConnect {
            try await settle(try await secure(connection, pair: true), connection)
        } else if policy.encryptsBondedOnConnect, link.manager.bond?.centralKey != nil {
            try await settle(try await secure(connection), connection)
        }
    }

    /// A request on `connection` was refused with `failure`: secures the link if that can help.
    /// True: secured, send the request again; false: nothing to do, the refusal stands.
    func remedy(_ failure: ATTFailure, on connection: BLEConnection) async throws(BLEError) -> Bool {
        guard securedLinks[connection.handle] != nil else { return false }
        let now = linkSecurity(connection.handle)
        guard let remedy = SecurityRemedy.remedy(for: failure.code, link: now) else {
            // Encrypted since the request went out (another request's pairing): worth one more try.
            return failure.code == ATTErrorCode.insufficientEncryption && now.isEncrypted
        }
        switch remedy {
        case .secure(let authenticated): try await settle(try await secure(connection, authenticated: authenticated), connection)
        case .pairAgain: try await settle(try await secure(connection, pair: true), connection)
        }
        return true
    }

    /// Tells the person how securing ended; a failure becomes the caller's error.
    private func settle(_ outcome: SecuringOutcome, _ connection: BLEConnection) async throws(BLEError) {
        await hostSecurity?.delegate.secured(outcome, peer: connection.peer)
        switch outcome {
        case .paired, .encrypted, .notStored: return
        case .failed(let failure): throw .pairingFailed(failure)
        case .bondRejected(let status): throw .bondRejected(connection.peer, status: status)
        }
    }
}
