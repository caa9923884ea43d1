import HAL

/// The LE Security Manager of one link (Core Specification Vol 3 Part H), both roles, as a value:
/// fed events (an SMP PDU, the user's passkey or answer, an LTK Request, the link's encryption
/// changing, time) and returning effects (PDUs to send, encryption to start or an LTK Request to
/// answer, prompts for the user, the outcome). It does no I/O and keeps no clock: `now` comes with
/// every event, and ``deadline`` says when to call again with ``SecurityEvent/tick``, so the host's
/// part is routing: CID 0x0006 in and out, three HCI commands, two HCI events.
///
/// What it does:
/// - LE Secure Connections (P-256 ECDH through libcrypto, the peer's key checked to be on the
///   curve; `f4`, `f5`, `f6`, `g2`) and legacy pairing (`c1`, `s1`) when `--legacy` asks or the
///   peer lacks SC;
/// - the method from both sides' IO capabilities and flags, as the specification's tables give
///   it (``AssociationModel``): Just Works, Passkey Entry with either side displaying (or both
///   typing), Numeric Comparison;
/// - key distribution: the legacy LTK with EDIV and Rand, the IRK with the identity address; no
///   CSRK (never asked for; a response offering one is refused as Invalid Parameters);
/// - the repeated-attempts rule (``RepeatedAttempts``), the 30 s SMP timeout, every Pairing Failed
///   reason; the security the link ends with (``LinkSecurity``);
/// - encryption with a bond's keys when the same device is met again (``Bond``).
///
/// One value per link, created with the link and given the peer's bond if there is one.
public struct SecurityManager: Sendable {
    /// Central (always the initiator of a pairing) or peripheral (always the responder).
    public enum Role: Hashable, Sendable {
        /// Starts pairing and encryption.
        case central
        /// Answers them, and may ask for them.
        case peripheral
    }

    /// This side's role on the link.
    public let role: Role
    /// What this side offers and insists on.
    public let configuration: SecurityConfiguration
    /// Our address on this link and the peer's, as the connection has them (`c1`, `f5`, `f6`).
    public let localAddress: BLEAddress
    /// The peer's address on this link (a private one, when it uses one).
    public let peerAddress: BLEAddress

    /// The peer's bond: given at creation, replaced by a pairing that bonds.
    public internal(set) var bond: Bond?
    /// The security the link has now.
    public internal(set) var security = LinkSecurity.none
    /// The repeated-attempts state; the host keeps it per peer across links.
    public internal(set) var attempts: RepeatedAttempts
    /// When to call ``handle(_:now:)`` with ``SecurityEvent/tick`` (the SMP timeout); nil: never.
    public internal(set) var deadline: Duration?
    /// The SMP timeout fired: this link takes no SMP PDU any more (§3.4).
    public internal(set) var timedOut = false

    var session: PairingSession?
    /// The key the link is being encrypted with, and the security it will give.
    var pendingEncryption: (key: SecurityKey, security: LinkSecurity, fromBond: Bool)?
    var random: SecurityRandom

    /// The SMP timeout (Vol 3 Part H §3.4).
    public static let timeout = Duration.seconds(30)

    /// A link's Security Manager, with the peer's bond and repeated-attempts state if the host
    /// keeps them; `random` is `.system` except in tests and fuzzing.
    public init(role: Role, configuration: SecurityConfiguration, localAddress: BLEAddress, peerAddress: BLEAddress,
                bond: Bond? = nil, attempts: RepeatedAttempts = RepeatedAttempts(), random: SecurityRandom = .system) {
        self.role = role
        self.configuration = configuration
        self.localAddress = localAddress
        self.peerAddress = peerAddress
        self.bond = bond
        self.attempts = attempts
        self.random = random
    }

    /// A pairing is under way.
    public var isPairing: Bool { session != nil }

    /// The method of the pairing under way, once both sides' features are known.
    public var pairingMethod: PairingMethod? {
        guard let session, session.response != nil else { return nil }
        return session.method
    }

    /// Feeds one event; returns what the host must do, in order.
    public mutating func handle(_ event: SecurityEvent, now: Duration) -> [SecurityEffect] {
        if let deadline, now >= deadline, session != nil {
            // Time ran out before this event: the pairing is over whatever the event says
            // (a disconnect still takes the link's security with it).
            let expired = expire()
            if case .disconnected = event { return expired + handle(event, now: now) }
            return expired
        }
        switch event {
        case .tick: return []
        case .received(let bytes): return receive(bytes, now: now)
        case .pair: return startPairing(now: now, peerAsked: nil)
        case .secure(let authenticated): return secure(authenticated: authenticated, now: now)
        case .requestSecurity: return requestSecurity(now: now)
        case .passkeyEntered(let passkey): return passkeyEntered(passkey, now: now)
        case .numericComparison(let accepted): return numericComparisonAnswered(accepted, now: now)
        case .userCancelled:
            guard session != nil else { return [] }
            return fail(.unspecified, "the user cancelled the pairing", now: now)
        case .ltkRequested(let ediv, let rand): return ltkRequested(ediv: ediv, rand: rand, now: now)
        case .encryptionChanged(let status, let enabled): return encryptionChanged(status: status, enabled: enabled, now: now)
        case .disconnected:
            security = .none
            pendingEncryption = nil
            deadline = nil
            guard session != nil else { return [] }
            session = nil
            return [.pairingFailed(PairingFailure(.linkLost, "the link went down before pairing finished"))]
        }
    }

    // MARK: Incoming PDUs

    private mutating func receive(_ bytes: [UInt8], now: Duration) -> [SecurityEffect] {
        guard !timedOut else { return [] }
        let pdu: SMPPDU
        do { pdu = try SMPPDU(parsing: bytes) } catch {
            // §3.3: never answer a Pairing Failed with another (a malformed one included).
            if bytes.first == SMPPDU.Code.pairingFailed { return peerFailed(.unspecified, detail: "a malformed Pairing Failed (\(error))", now: now) }
            return fail(error.pairingFailureReason, error.description, now: now)
        }
        switch pdu {
        case .pairingFailed(let reason):
            return peerFailed(reason, detail: "it refused the pairing", now: now)
        case .pairingRequest(let features):
            guard role == .peripheral else { return fail(.commandNotSupported, "a central received a Pairing Request", now: now) }
            return pairingRequested(features, now: now)
        case .securityRequest(let auth):
            guard role == .central else { return fail(.commandNotSupported, "a peripheral received a Security Request", now: now) }
            return securityRequested(auth, now: now)
        case .keypressNotification:
            // Hints for the peer's UI; we never ask for them and have nothing to do with them.
            return []
        default:
            guard session != nil else {
                return fail(.unspecified, "\(pdu.name) arrived with no pairing under way", now: now)
            }
            return continuePairing(with: pdu, now: now)
        }
    }

    private mutating func continuePairing(with pdu: SMPPDU, now: Duration) -> [SecurityEffect] {
        switch pdu {
        case .pairingResponse(let features): return pairingResponded(features, now: now)
        case .pairingPublicKey(let key): return publicKeyReceived(key, now: now)
        case .pairingConfirm(let value): return confirmReceived(value, now: now)
        case .pairingRandom(let value): return randomReceived(value, now: now)
        case .pairingDHKeyCheck(let value): return dhKeyCheckReceived(value, now: now)
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            // The peer may see the link encrypted (and send its keys) before our controller's
            // Encryption Change reaches us: keep a few until it does.
            if var s = session, s.stage == .encrypting, pendingEncryption != nil {
                guard s.earlyKeys.count < 8 else { return fail(.unspecified, "keys arrived before the link was encrypted", now: now) }
                s.earlyKeys.append(pdu)
                session = s
                return []
            }
            return keyReceived(pdu, now: now)
        case .pairingRequest, .securityRequest, .pairingFailed, .keypressNotification:
            return []
        }
    }

    // MARK: Ending

    /// Sends Pairing Failed with `reason` and ends the pairing (if one is under way).
    /// Reported as ``SecurityEffect/pairingFailed(_:)`` when a pairing was under way or
    /// `attempt` says this answers one (a Pairing Request refused); a stray PDU is only answered.
    mutating func fail(_ reason: PairingFailureReason, _ detail: String, now: Duration, attempt: Bool = false) -> [SecurityEffect] {
        if reason == .confirmValueFailed || reason == .dhKeyCheckFailed { attempts.recordFailure(now: now) }
        let report = session != nil || attempt
        session = nil
        deadline = nil
        var effects: [SecurityEffect] = [.send(.pairingFailed(reason))]
        if report { effects.append(.pairingFailed(PairingFailure(.sent(reason), detail))) }
        return effects
    }

    /// The peer sent Pairing Failed.
    private mutating func peerFailed(_ reason: PairingFailureReason, detail: String, now: Duration) -> [SecurityEffect] {
        if reason == .confirmValueFailed || reason == .dhKeyCheckFailed { attempts.recordFailure(now: now) }
        session = nil
        deadline = nil
        return [.pairingFailed(PairingFailure(.received(reason), Self.advice(for: reason) ?? detail))]
    }

    /// The SMP timer ran out: the pairing failed, and no SMP PDU goes on this link any more.
    private mutating func expire() -> [SecurityEffect] {
        session = nil
        deadline = nil
        timedOut = true
        return [.pairingFailed(PairingFailure(.timeout, "the peer sent nothing to complete it within 30 s (SMP timeout); reconnect to pair again"))]
    }

    /// Sends `pdu` and restarts the SMP timer (§3.4: reset whenever a command is queued).
    mutating func send(_ pdu: SMPPDU, now: Duration) -> SecurityEffect {
        if session != nil { deadline = now + Self.timeout }
        return .send(pdu)
    }

    /// What a person can do about the peer's reason, where there is something to say.
    static func advice(for reason: PairingFailureReason) -> String? {
        switch reason {
        case .confirmValueFailed: "the passkey typed differs from the one shown; pair again and type the passkey the display shows"
        case .passkeyEntryFailed: "the passkey was not entered on the device"
        case .numericComparisonFailed: "the device's user said the numbers differ"
        case .authenticationRequirements: "the device wants protection these IO capabilities cannot give; try --io keyboard-display"
        case .pairingNotSupported: "the device does not pair"
        case .repeatedAttempts: "too many failed attempts; wait a minute and pair again"
        case .encryptionKeySize: "the device refuses the key size offered"
        case .oobNotAvailable: "the device wants out-of-band pairing, which hwprobe does not have"
        case .dhKeyCheckFailed: "the device's DHKey check failed (a man in the middle, or a wrong passkey)"
        default: nil
        }
    }
}
