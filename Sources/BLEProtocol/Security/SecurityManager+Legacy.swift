import HAL

/// LE legacy pairing's phase 2 (Vol 3 Part H §2.3.5.2–2.3.5.5): the TK from the method, Mconfirm
/// and Sconfirm with `c1`, Mrand and Srand, and the STK with `s1`.
extension SecurityManager {
    /// After the features: show or ask for the passkey; the initiator commits as soon as it has the TK.
    mutating func beginLegacy(now: Duration) -> [SecurityEffect] {
        session?.stage = .confirming
        var effects = beginUserPart()
        if let s = session, s.isInitiator, s.tk != nil { effects += sendLegacyConfirm(now: now) }
        return effects
    }

    /// Mconfirm or Sconfirm: `c1(TK, rand, preq, pres, iat, ia, rat, ra)`.
    mutating func sendLegacyConfirm(now: Duration) -> [SecurityEffect] {
        guard var s = session, let tk = s.tk, !s.sentConfirm else { return [] }
        let nonce = random.key()
        let confirm: SecurityKey
        do { confirm = try legacyConfirm(tk: tk, random: nonce, session: s) } catch {
            return fail(.unspecified, error.description, now: now)
        }
        s.localNonce = nonce
        s.sentConfirm = true
        session = s
        return [send(.pairingConfirm(confirm), now: now)]
    }

    mutating func legacyConfirmReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.peerConfirm == nil else { return fail(.unspecified, "a second Pairing Confirm arrived", now: now) }
        if s.isInitiator {
            guard s.sentConfirm, let nonce = s.localNonce else { return fail(.unspecified, "a Pairing Confirm arrived before ours", now: now) }
            s.peerConfirm = value
            s.sentNonce = true
            session = s
            return [send(.pairingRandom(nonce), now: now)]
        }
        s.peerConfirm = value
        session = s
        return s.tk != nil ? sendLegacyConfirm(now: now) : []
    }

    mutating func legacyRandomReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.peerNonce == nil, let tk = s.tk, let peerConfirm = s.peerConfirm, let nonce = s.localNonce,
              s.sentConfirm, s.isInitiator ? s.sentNonce : true else {
            return fail(.unspecified, "a Pairing Random arrived out of turn", now: now)
        }
        let expected: SecurityKey
        let stk: SecurityKey
        do {
            expected = try legacyConfirm(tk: tk, random: value, session: s)
            // STK = s1(TK, Srand, Mrand).
            stk = try SecurityFunctions.s1(k: tk, r1: s.isInitiator ? value : nonce, r2: s.isInitiator ? nonce : value).masked(toSize: s.keySize)
        } catch {
            return fail(.unspecified, error.description, now: now)
        }
        guard expected == peerConfirm else {
            return fail(.confirmValueFailed, s.method.isAuthenticated
                ? "the device's confirm value does not match its random value: the passkeys on the two sides differ"
                : "the device's confirm value does not match its random value", now: now)
        }
        s.peerNonce = value
        s.encryptionKey = stk
        s.stage = .encrypting
        session = s
        if s.isInitiator {
            return encryptForPairing(with: stk)
        }
        s.sentNonce = true
        session = s
        return [send(.pairingRandom(nonce), now: now)]
    }

    private func legacyConfirm(tk: SecurityKey, random: SecurityKey, session s: PairingSession) throws(SecurityCryptoError) -> SecurityKey {
        guard let response = s.response else { throw .operationFailed("c1 before the Pairing Response") }
        let initiator = s.isInitiator ? localAddress : peerAddress
        let responder = s.isInitiator ? peerAddress : localAddress
        return try SecurityFunctions.c1(k: tk, r: random, preq: SMPPDU.pairingRequest(s.request).c1Value,
                                        pres: SMPPDU.pairingResponse(response).c1Value, initiator: initiator, responder: responder)
    }
}
