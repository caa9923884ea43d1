import HAL

/// LE Secure Connections' phase 2 (Vol 3 Part H §2.3.5.6): public key exchange and ECDH,
/// authentication stage 1 (Just Works / Numeric Comparison's single round, Passkey Entry's 20),
/// and stage 2 (`f5`, then the DHKey checks with `f6`).
extension SecurityManager {
    /// The SC debug key's public half (§2.3.5.6.1): its private half is published, so a peer
    /// using it outside a debugging session is refused.
    static let debugPublicKeyX: [UInt8] = [
        0x20, 0xB0, 0x03, 0xD2, 0xF2, 0x97, 0xBE, 0x2C, 0x5E, 0x2C, 0x83, 0xA7, 0xE9, 0xF9, 0xA5, 0xB9,
        0xEF, 0xF4, 0x91, 0x11, 0xAC, 0xF4, 0xFD, 0xDB, 0xCC, 0x03, 0x01, 0x48, 0x0E, 0x35, 0x9D, 0xE6,
    ]

    /// After the features: a fresh key pair; the initiator sends its public key first.
    mutating func beginSecureConnections(now: Duration) -> [SecurityEffect] {
        let pair: P256KeyPair
        do { pair = try P256KeyPair() } catch { return fail(.unspecified, error.description, now: now) }
        session?.keyPair = pair
        session?.stage = .exchangingPublicKeys
        guard session?.isInitiator == true else { return [] }
        return [send(.pairingPublicKey(pair.publicKey), now: now)]
    }

    mutating func publicKeyReceived(_ key: P256PublicKey, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.secureConnections, s.stage == .exchangingPublicKeys, s.peerPublicKey == nil, let pair = s.keyPair else {
            return fail(.unspecified, "a Pairing Public Key arrived out of turn", now: now)
        }
        if key == pair.publicKey {
            // Our own key reflected back (CVE-2020-26558's mitigation, as BlueZ applies it).
            return fail(.unspecified, "the device sent back our own public key", now: now)
        }
        if key.x == Self.debugPublicKeyX {
            return fail(.authenticationRequirements, "the device uses the Secure Connections debug key, whose private half is published", now: now)
        }
        do { s.dhKey = try pair.sharedSecret(with: key) } catch {
            guard error == .publicKeyNotOnCurve else { return fail(.unspecified, error.description, now: now) }
            // The specification forbids using anything derived from an invalid key (Core Erratum
            // 10734, §2.3.5.6.1); DHKey Check Failed is the reason the check's failure gives.
            return fail(.dhKeyCheckFailed, "the device's public key is not a point on the P-256 curve (refused: an invalid-curve attack or a broken peer)", now: now)
        }
        s.peerPublicKey = key
        s.stage = .confirming
        s.round = 0
        s.resetRound()
        session = s
        var effects: [SecurityEffect] = []
        if !s.isInitiator { effects.append(send(.pairingPublicKey(pair.publicKey), now: now)) }
        effects += beginUserPart()
        switch s.method {
        case .justWorks, .numericComparison:
            // Only the responder commits in this round: Cb = f4(PKbx, PKax, Nb, 0).
            if !s.isInitiator { effects += sendSecureConnectionsConfirm(now: now) }
        case .passkeyEntry:
            if s.isInitiator, session?.passkey != nil { effects += sendSecureConnectionsConfirm(now: now) }
        }
        return effects
    }

    /// This round's Z for `f4`: 0 for Just Works and Numeric Comparison; for Passkey Entry,
    /// 0x80 with the round's bit of the passkey, least significant first (§2.3.5.6.3).
    private func z(_ s: PairingSession) -> UInt8 {
        guard case .passkeyEntry = s.method, let passkey = s.passkey else { return 0 }
        return 0x80 | UInt8((passkey >> UInt32(s.round)) & 1)
    }

    /// Our commitment: `f4(our PKx, peer's PKx, our nonce, Z)`.
    mutating func sendSecureConnectionsConfirm(now: Duration) -> [SecurityEffect] {
        guard var s = session, !s.sentConfirm, let pair = s.keyPair, let peerKey = s.peerPublicKey else { return [] }
        let nonce = random.key()
        let confirm: SecurityKey
        do { confirm = try SecurityFunctions.f4(u: pair.publicKey.x, v: peerKey.x, x: nonce, z: z(s)) } catch {
            return fail(.unspecified, error.description, now: now)
        }
        s.localNonce = nonce
        s.sentConfirm = true
        session = s
        return [send(.pairingConfirm(confirm), now: now)]
    }

    mutating func secureConnectionsConfirmReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.stage == .confirming, s.peerConfirm == nil else {
            return fail(.unspecified, "a Pairing Confirm arrived out of turn", now: now)
        }
        if case .passkeyEntry = s.method {
            s.peerConfirm = value
            if s.isInitiator {
                guard s.sentConfirm, let nonce = s.localNonce else { return fail(.unspecified, "a Pairing Confirm arrived before ours", now: now) }
                s.sentNonce = true
                session = s
                return [send(.pairingRandom(nonce), now: now)]
            }
            session = s
            return s.passkey != nil ? sendSecureConnectionsConfirm(now: now) : []
        }
        // Just Works / Numeric Comparison: only the responder's Cb comes; Na answers it.
        guard s.isInitiator else { return fail(.unspecified, "the initiator sent a Pairing Confirm in Just Works or Numeric Comparison", now: now) }
        let nonce = random.key()
        s.peerConfirm = value
        s.localNonce = nonce
        s.sentNonce = true
        session = s
        return [send(.pairingRandom(nonce), now: now)]
    }

    mutating func secureConnectionsRandomReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.stage == .confirming, s.peerNonce == nil, let pair = s.keyPair, let peerKey = s.peerPublicKey else {
            return fail(.unspecified, "a Pairing Random arrived out of turn", now: now)
        }
        let isPasskey: Bool
        if case .passkeyEntry = s.method { isPasskey = true } else { isPasskey = false }
        // Who committed this round must now match its commitment: the responder always, the
        // initiator only in Passkey Entry.
        let peerCommitted = isPasskey || s.isInitiator
        if s.isInitiator {
            guard s.sentNonce else { return fail(.unspecified, "a Pairing Random arrived before ours", now: now) }
        } else {
            // The responder has committed (Cb), and in Passkey Entry has the initiator's Ca.
            guard s.sentConfirm, !isPasskey || s.peerConfirm != nil else {
                return fail(.unspecified, "a Pairing Random arrived before the confirm values", now: now)
            }
        }
        if peerCommitted {
            guard let peerConfirm = s.peerConfirm else { return fail(.unspecified, "a Pairing Random arrived before its Pairing Confirm", now: now) }
            let expected: SecurityKey
            do { expected = try SecurityFunctions.f4(u: peerKey.x, v: pair.publicKey.x, x: value, z: z(s)) } catch {
                return fail(.unspecified, error.description, now: now)
            }
            guard expected == peerConfirm else {
                return fail(.confirmValueFailed, isPasskey
                    ? "the device's confirm value does not match: the passkeys on the two sides differ"
                    : "the device's confirm value does not match its random value", now: now)
            }
        }
        s.peerNonce = value
        var effects: [SecurityEffect] = []
        if !s.isInitiator, let nonce = s.localNonce {
            s.sentNonce = true
            session = s
            effects.append(send(.pairingRandom(nonce), now: now))
        }
        guard isPasskey else {
            session = s
            return effects + beginDHKeyCheck(now: now)
        }
        s.round += 1
        guard s.round < 20 else {
            session = s
            return effects + beginDHKeyCheck(now: now)
        }
        // The next round; the last round's nonces stay for f5 and f6 only after round 20.
        s.resetRound()
        session = s
        if s.isInitiator { effects += sendSecureConnectionsConfirm(now: now) }
        return effects
    }

    /// Stage 2: MacKey and LTK from `f5`; Numeric Comparison's number for the user.
    private mutating func beginDHKeyCheck(now: Duration) -> [SecurityEffect] {
        guard var s = session, let dhKey = s.dhKey, let values = stageTwoValues(s), let pair = s.keyPair, let peerKey = s.peerPublicKey else {
            return fail(.unspecified, "the DHKey check began without its values", now: now)
        }
        var effects: [SecurityEffect] = []
        do {
            let keys = try SecurityFunctions.f5(w: dhKey, n1: values.na, n2: values.nb, a1: values.a, a2: values.b)
            s.macKey = keys.macKey
            s.encryptionKey = keys.ltk.masked(toSize: s.keySize)
            if case .numericComparison = s.method {
                let pka = s.isInitiator ? pair.publicKey.x : peerKey.x
                let pkb = s.isInitiator ? peerKey.x : pair.publicKey.x
                let number = try SecurityFunctions.g2(u: pka, v: pkb, x: values.na, y: values.nb) % 1_000_000
                s.awaitingComparison = true
                effects.append(.confirmNumericValue(number))
            } else {
                s.userConfirmed = true
            }
        } catch {
            return fail(.unspecified, error.description, now: now)
        }
        s.stage = .checkingDHKey
        session = s
        return effects + proceedWithDHKeyCheck(now: now)
    }

    /// The initiator sends Ea once its user has said yes; the responder checks Ea and answers Eb
    /// once it has both Ea and its user's yes.
    private mutating func proceedWithDHKeyCheck(now: Duration) -> [SecurityEffect] {
        guard var s = session, s.stage == .checkingDHKey, s.userConfirmed, !s.sentCheck,
              let values = stageTwoValues(s), let macKey = s.macKey, let response = s.response else { return [] }
        do {
            // Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B); Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
            let ea = try SecurityFunctions.f6(w: macKey, n1: values.na, n2: values.nb, r: values.r, ioCap: s.request.ioCapabilityTriple, a1: values.a, a2: values.b)
            let eb = try SecurityFunctions.f6(w: macKey, n1: values.nb, n2: values.na, r: values.r, ioCap: response.ioCapabilityTriple, a1: values.b, a2: values.a)
            if s.isInitiator {
                s.sentCheck = true
                s.expectedPeerCheck = eb
                session = s
                return [send(.pairingDHKeyCheck(ea), now: now)]
            }
            guard let received = s.peerCheck else { return [] }
            guard received == ea else {
                return fail(.dhKeyCheckFailed, "the device's DHKey check value does not match", now: now)
            }
            s.sentCheck = true
            s.stage = .encrypting
            session = s
            return [send(.pairingDHKeyCheck(eb), now: now)]
        } catch {
            return fail(.unspecified, error.description, now: now)
        }
    }

    mutating func dhKeyCheckReceived(_ value: SecurityKey, now: Duration) -> [SecurityEffect] {
        guard let s = session, s.secureConnections, s.stage == .checkingDHKey else {
            return fail(.unspecified, "a Pairing DHKey Check arrived out of turn", now: now)
        }
        if s.isInitiator {
            guard s.sentCheck, let expected = s.expectedPeerCheck, let key = s.encryptionKey else {
                return fail(.unspecified, "a Pairing DHKey Check arrived before ours", now: now)
            }
            guard value == expected else { return fail(.dhKeyCheckFailed, "the device's DHKey check value does not match", now: now) }
            session?.stage = .encrypting
            return encryptForPairing(with: key)
        }
        guard s.peerCheck == nil else { return fail(.unspecified, "a second Pairing DHKey Check arrived", now: now) }
        session?.peerCheck = value
        return proceedWithDHKeyCheck(now: now)
    }

    /// The user answered the numeric comparison.
    mutating func numericComparisonAnswered(_ accepted: Bool, now: Duration) -> [SecurityEffect] {
        guard session?.awaitingComparison == true else { return [] }
        session?.awaitingComparison = false
        guard accepted else { return fail(.numericComparisonFailed, "the numbers shown on the two sides differ (the user said no)", now: now) }
        session?.userConfirmed = true
        return proceedWithDHKeyCheck(now: now)
    }

    /// Na, Nb, the 56-bit addresses A and B, and `r` (the passkey, or zero) for stage 2.
    private func stageTwoValues(_ s: PairingSession) -> (na: SecurityKey, nb: SecurityKey, a: [UInt8], b: [UInt8], r: SecurityKey)? {
        guard let local = s.localNonce, let peer = s.peerNonce else { return nil }
        let initiator = s.isInitiator ? localAddress : peerAddress
        let responder = s.isInitiator ? peerAddress : localAddress
        var r = SecurityKey.zero
        if case .passkeyEntry = s.method, let passkey = s.passkey { r = SecurityKey(number: passkey) }
        return (s.isInitiator ? local : peer, s.isInitiator ? peer : local,
                SecurityFunctions.address56(initiator), SecurityFunctions.address56(responder), r)
    }
}
