import HAL

/// Encrypting the link: with the STK or new LTK to finish a pairing, with a bond's key when the
/// device is met again, and the peripheral's answers to LTK Requests (Vol 3 Part H §2.4.4; HCI's
/// LE Enable Encryption, LE Long Term Key Request Reply / Negative Reply, Encryption Change).
extension SecurityManager {
    /// Pairing's Confirm and Random go to the legacy or the Secure Connections exchange.
    mutating func confirmReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard let s = session, s.stage == .confirming else { return fail(.unspecified, "a Pairing Confirm arrived out of turn", now: now) }
        return s.secureConnections ? secureConnectionsConfirmReceived(value, now: now) : legacyConfirmReceived(value, now: now)
    }

    mutating func randomReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard let s = session, s.stage == .confirming else { return fail(.unspecified, "a Pairing Random arrived out of turn", now: now) }
        return s.secureConnections ? secureConnectionsRandomReceived(value, now: now) : legacyRandomReceived(value, now: now)
    }

    /// Central: encrypt with the key the pairing produced (EDIV and Rand zero, §2.4.4.1).
    mutating func encryptForPairing(with key: SecurityKey) -> [SecurityEffect] {
        guard let s = session else { return [] }
        pendingEncryption = (key, pairingSecurity(s), false)
        return [.startEncryption(EncryptionKey(ltk: key))]
    }

    /// Central: encrypt with a bond's key; no pairing.
    mutating func encrypt(with key: EncryptionKey, bond: Bond) -> [SecurityEffect] {
        pendingEncryption = (key.ltk, bond.security, true)
        return [.startEncryption(key)]
    }

    /// What a link encrypted with this pairing's key has.
    func pairingSecurity(_ s: PairingSession) -> LinkSecurity {
        LinkSecurity(isEncrypted: true, isAuthenticated: s.method.isAuthenticated, isSecureConnections: s.secureConnections, keySize: s.keySize)
    }

    /// Peripheral: the controller asks for the LTK named by EDIV and Rand.
    mutating func ltkRequested(ediv: UInt16, rand: UInt64, now: Duration) -> [SecurityEffect] {
        guard role == .peripheral else { return [] }
        if let s = session {
            // Mid-pairing the central encrypts with the STK or new LTK, EDIV and Rand zero.
            guard s.stage == .encrypting, let key = s.encryptionKey, ediv == 0, rand == 0 else { return [.rejectLTKRequest] }
            pendingEncryption = (key, pairingSecurity(s), false)
            return [.replyLTK(key)]
        }
        guard let bond, let key = bond.peripheralKey, key.matches(ediv: ediv, rand: rand) else {
            return [.rejectLTKRequest]
        }
        pendingEncryption = (key.ltk, bond.security, true)
        return [.replyLTK(key.ltk)]
    }

    /// Encryption Change or Key Refresh Complete.
    mutating func encryptionChanged(status: UInt8, enabled: Bool, now: Duration) -> [SecurityEffect] {
        guard let pending = pendingEncryption else {
            // Encryption turned off (LE links cannot, but a controller may say so): say it.
            if status == 0, !enabled, security.isEncrypted {
                security = .none
                return [.securityChanged(security)]
            }
            return []
        }
        pendingEncryption = nil
        guard status == 0, enabled else {
            if let s = session, s.stage == .encrypting {
                session = nil
                deadline = nil
                return [.send(.pairingFailed(.unspecified)),
                        .pairingFailed(PairingFailure(.encryptionFailed(status: status), "the controller could not encrypt with the new key"))]
            }
            return pending.fromBond ? [.bondEncryptionFailed(status: status)] : []
        }
        security = pending.security
        var effects: [SecurityEffect] = [.securityChanged(security)]
        if let s = session, s.stage == .encrypting {
            effects += beginKeyDistribution(now: now)
        }
        return effects
    }
}
