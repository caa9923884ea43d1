import HAL

/// Phase 1 (Vol 3 Part H §2.3): starting a pairing, the Pairing Request and Response, and what
/// the two sides' features decide (method, key size, Secure Connections, bonding, the keys sent).
extension SecurityManager {
    /// Central: sends a Pairing Request. `peerAsked` is the AuthReq of a Security Request we are
    /// answering (its MITM wish is honoured).
    mutating func startPairing(now: Duration, peerAsked: AuthenticationRequirements?) -> [SecurityEffect] {
        guard role == .central else {
            return [.pairingFailed(PairingFailure(.refused(.commandNotSupported), "only the central starts a pairing; a peripheral asks for one with a Security Request"))]
        }
        guard !timedOut else {
            return [.pairingFailed(PairingFailure(.refused(.unspecified), "an earlier pairing on this link timed out, and SMP allows no other on it; reconnect and pair again"))]
        }
        guard session == nil else { return [] }
        if let end = attempts.waitEnds(now: now) {
            return [.pairingFailed(PairingFailure(.refused(.repeatedAttempts), Self.waitAdvice(until: end, now: now)))]
        }
        var auth = configuration.authentication
        if peerAsked?.contains(.mitm) == true { auth.insert(.mitm) }
        let request = PairingFeatures(ioCapability: configuration.ioCapability, authentication: auth, maximumKeySize: UInt8(configuration.maximumKeySize),
                                      initiatorKeys: configuration.keysWeSend, responderKeys: configuration.keysWeWant)
        session = PairingSession(isInitiator: true, stage: .awaitingResponse, request: request)
        return [send(.pairingRequest(request), now: now)]
    }

    /// Central: the link is to be secure; encrypt with the bond's key when it gives what is asked.
    mutating func secure(authenticated: Bool, now: Duration) -> [SecurityEffect] {
        guard role == .central else { return startPairing(now: now, peerAsked: nil) }
        guard session == nil, pendingEncryption == nil else { return [] }
        if security.isEncrypted, !authenticated || security.isAuthenticated { return [] }
        if let bond, let key = bond.centralKey, !authenticated || bond.isAuthenticated {
            return encrypt(with: key, bond: bond)
        }
        return startPairing(now: now, peerAsked: authenticated ? [.mitm] : nil)
    }

    /// Peripheral: asks the central to secure the link.
    mutating func requestSecurity(now: Duration) -> [SecurityEffect] {
        guard role == .peripheral, !timedOut, session == nil else { return [] }
        return [.send(.securityRequest(configuration.authentication))]
    }

    /// Central: the peripheral sent a Security Request.
    mutating func securityRequested(_ auth: AuthenticationRequirements, now: Duration) -> [SecurityEffect] {
        guard session == nil, pendingEncryption == nil else { return [] }
        if let end = attempts.waitEnds(now: now) {
            return fail(.repeatedAttempts, Self.waitAdvice(until: end, now: now), now: now, attempt: true)
        }
        let wantsMITM = auth.contains(.mitm)
        if security.isEncrypted, !wantsMITM || security.isAuthenticated { return [] }
        let wantsSC = auth.contains(.secureConnections) && configuration.secureConnections != .legacyOnly
        if let bond, let key = bond.centralKey, !wantsMITM || bond.isAuthenticated, !wantsSC || bond.isSecureConnections {
            return encrypt(with: key, bond: bond)
        }
        return startPairing(now: now, peerAsked: auth)
    }

    /// Peripheral: a Pairing Request arrived.
    mutating func pairingRequested(_ request: PairingFeatures, now: Duration) -> [SecurityEffect] {
        guard session == nil else { return fail(.unspecified, "a second Pairing Request arrived during a pairing", now: now) }
        guard configuration.acceptsPairing else {
            return fail(.pairingNotSupported, "pairing is off here (serve --pairing off)", now: now, attempt: true)
        }
        if let end = attempts.waitEnds(now: now) {
            return fail(.repeatedAttempts, Self.waitAdvice(until: end, now: now), now: now, attempt: true)
        }
        let bonding = request.authentication.wantsBonding && configuration.bondable
        let response = PairingFeatures(
            ioCapability: configuration.ioCapability, authentication: configuration.authentication, maximumKeySize: UInt8(configuration.maximumKeySize),
            initiatorKeys: bonding ? request.initiatorKeys.intersection(configuration.keysWeWant) : [],
            responderKeys: bonding ? request.responderKeys.intersection(configuration.keysWeSend) : [])
        var started = PairingSession(isInitiator: false, stage: .confirming, request: request)
        started.response = response
        session = started
        deadline = now + Self.timeout
        if let refusal = negotiate() { return fail(refusal.reason, refusal.detail, now: now, attempt: true) }
        var effects = [send(.pairingResponse(response), now: now)]
        guard let session else { return effects }
        if session.secureConnections {
            effects += beginSecureConnections(now: now)
        } else {
            effects += beginLegacy(now: now)
        }
        return effects
    }

    /// Central: the Pairing Response arrived.
    mutating func pairingResponded(_ response: PairingFeatures, now: Duration) -> [SecurityEffect] {
        guard let current = session, current.isInitiator, current.stage == .awaitingResponse else {
            return fail(.unspecified, "a Pairing Response arrived unasked", now: now)
        }
        // The responder may only drop keys from what was asked, never add (§3.6.1): a CSRK or a
        // link key offered unasked is refused here.
        guard current.request.initiatorKeys.isSuperset(of: response.initiatorKeys),
              current.request.responderKeys.isSuperset(of: response.responderKeys) else {
            return fail(.invalidParameters, "the Pairing Response distributes keys that were not asked for", now: now)
        }
        session?.response = response
        if let refusal = negotiate() { return fail(refusal.reason, refusal.detail, now: now) }
        guard let session else { return [] }
        return session.secureConnections ? beginSecureConnections(now: now) : beginLegacy(now: now)
    }

    /// Decides what the two sides' features give; a reason to refuse, or nil and the session set up.
    private mutating func negotiate() -> (reason: PairingFailureReason, detail: String)? {
        guard var s = session, let response = s.response else { return (.unspecified, "no Pairing Response") }
        let request = s.request
        let peer = s.isInitiator ? response : request
        guard peer.maximumKeySize <= 16 else {
            return (.invalidParameters, "the device offers a \(peer.maximumKeySize)-byte key; the most is 16")
        }
        let keySize = Int(min(request.maximumKeySize, response.maximumKeySize))
        guard keySize >= 7, keySize >= configuration.minimumKeySize else {
            return (.encryptionKeySize, "the device offers at most a \(keySize)-byte key; \(configuration.minimumKeySize) is the least accepted here")
        }
        let secureConnections = request.authentication.contains(.secureConnections) && response.authentication.contains(.secureConnections)
        if configuration.secureConnections == .only, !secureConnections {
            return (.authenticationRequirements, "the device does not support LE Secure Connections, which is required here")
        }
        if AssociationModel.needsOOB(initiator: request, responder: response, secureConnections: secureConnections) {
            return (.oobNotAvailable, "the device expects out-of-band pairing data, which hwprobe does not have")
        }
        let method = AssociationModel.method(initiator: request, responder: response, secureConnections: secureConnections)
        if configuration.requiresMITM, !method.isAuthenticated {
            return (.authenticationRequirements, "authenticated pairing is required, but IO capabilities \(request.ioCapability) and \(response.ioCapability) allow only Just Works")
        }
        s.method = method
        s.secureConnections = secureConnections
        s.keySize = keySize
        s.bonding = request.authentication.wantsBonding && response.authentication.wantsBonding
        // Secure Connections derives its LTK with f5 and never sends one (EncKey is ignored).
        var fromInitiator = response.initiatorKeys.intersection(.supported)
        var fromResponder = response.responderKeys.intersection(.supported)
        if secureConnections {
            fromInitiator.remove(.encryptionKey)
            fromResponder.remove(.encryptionKey)
        }
        s.weSend = s.isInitiator ? fromInitiator : fromResponder
        s.peerSends = s.isInitiator ? fromResponder : fromInitiator
        session = s
        return nil
    }

    /// Shows or asks for the passkey, as the method says (legacy at once, Secure Connections
    /// after the public keys).
    mutating func beginUserPart() -> [SecurityEffect] {
        guard var s = session else { return [] }
        var effects: [SecurityEffect] = []
        switch s.method {
        case .justWorks:
            s.tk = .zero
            s.userConfirmed = true
        case .numericComparison:
            break
        case .passkeyEntry(let display):
            let weDisplay = (display == .initiator && s.isInitiator) || (display == .responder && !s.isInitiator)
            if weDisplay {
                let passkey = random.passkey()
                s.passkey = passkey
                s.tk = SecurityKey(number: passkey)
                effects.append(.displayPasskey(passkey))
            } else {
                s.awaitingPasskey = true
                effects.append(.requestPasskey)
            }
        }
        session = s
        return effects
    }

    /// The user typed the passkey.
    mutating func passkeyEntered(_ passkey: UInt32, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.awaitingPasskey else { return [] }
        guard passkey <= 999_999 else { return fail(.passkeyEntryFailed, "a passkey has six digits (000000 to 999999)", now: now) }
        s.awaitingPasskey = false
        s.passkey = passkey
        s.tk = SecurityKey(number: passkey)
        session = s
        if s.secureConnections {
            if s.isInitiator { return sendSecureConnectionsConfirm(now: now) }
            return s.peerConfirm != nil && !s.sentConfirm ? sendSecureConnectionsConfirm(now: now) : []
        }
        if s.isInitiator { return sendLegacyConfirm(now: now) }
        return s.peerConfirm != nil && !s.sentConfirm ? sendLegacyConfirm(now: now) : []
    }

    /// `wait N s and pair again`.
    static func waitAdvice(until end: Duration, now: Duration) -> String {
        let seconds = Int((end - now).components.seconds) + 1
        return "a pairing with this device failed its check moments ago; wait \(seconds) s and pair again"
    }
}
