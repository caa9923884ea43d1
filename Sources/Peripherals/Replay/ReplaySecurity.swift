import BLEProtocol
import HAL
import Transports

/// The Security Manager side of a replayed connection (issue 29, item 3). A cassette keeps that
/// a connection was paired (the method, Secure Connections or legacy, the kinds of keys), that a
/// pairing failed and why, and that the link was encrypted, but never a key: so a replay
/// simulates the secured link rather than reproducing it.
///
/// - A Pairing Request is answered as the recording says: with the recorded failure's reason;
///   or, when the connection was paired, by a Security Manager of our own in the peripheral role,
///   set up so that the host's pairing comes out with the recorded method and kind (its IO
///   capability and MITM flag chosen for it: Table 2.8 of Core Vol 3 Part H §2.3.5.1). Its keys
///   are new ones, made for this replay; a passkey it shows goes to the warnings, a comparison is
///   accepted. With neither recorded: Pairing Not Supported, as a device that never pairs.
/// - LE Enable Encryption succeeds on a connection the recording saw encrypted: with the key of
///   the replay's own pairing when one is under way, otherwise with whatever key the host has
///   (its bond with the device from the live run) — the link is simulated, there is nothing to
///   check the key against. On a connection never encrypted it fails with no key.
struct ReplaySecurity {
    /// What the recorded connection did, reduced to what a replay needs.
    private let pairing: (method: String, secureConnections: Bool, deviceKeys: [String], hostKeys: [String])?
    private let failure: UInt8?
    private let wasEncrypted: Bool
    private let localAddress: BLEAddress
    private let warn: @Sendable (String) -> Void
    private var manager: SecurityManager?

    init(_ connection: BLECassette.Connection?, localAddress: BLEAddress, warn: @escaping @Sendable (String) -> Void) {
        var pairing: (method: String, secureConnections: Bool, deviceKeys: [String], hostKeys: [String])?
        var failure: UInt8?
        var encrypted = false
        for record in connection?.security ?? [] {
            switch record.event {
            case .pairing(let method, let secureConnections, let deviceKeys, let hostKeys):
                pairing = (method, secureConnections, deviceKeys, hostKeys)
            case .pairingFailed(let reason):
                // A failure the pairing was retried after does not decide the replay's answer.
                if pairing == nil { failure = reason }
            case .encrypted:
                encrypted = true
            }
        }
        self.pairing = pairing
        self.failure = pairing == nil ? failure : nil
        self.wasEncrypted = encrypted || pairing != nil
        self.localAddress = localAddress
        self.warn = warn
    }

    /// Whether the recording had anything to say about security on this connection; if not, the
    /// device's channels answer as one that never pairs.
    var isRecorded: Bool { pairing != nil || failure != nil || wasEncrypted }

    /// The Security Manager configuration that makes our host's pairing end with `method`: a
    /// device that displays for Passkey Entry (the host types), that can say yes or no for
    /// Numeric Comparison, that has no input or output for Just Works. It sends the kinds of keys
    /// the recorded device sent: an IRK of the replay's own (with the recorded address as the
    /// identity) when it sent one; bondable unless a legacy pairing distributed nothing (Secure
    /// Connections derives its LTK, so no key kind tells whether it bonded: it is taken as bonded).
    static func configuration(method: String, secureConnections: Bool, deviceKeys: [String], hostKeys: [String],
                              identity: BLEAddress) -> SecurityConfiguration {
        let io: IOCapability = switch method {
        case "passkey": .displayOnly
        case "numeric-comparison": .displayYesNo
        default: .noInputNoOutput
        }
        var localIdentity: LocalIdentity?
        if deviceKeys.contains("irk") {
            var random = SecurityRandom.system
            localIdentity = SecurityKey(bytes: random.bytes(16)).map { LocalIdentity(irk: $0, address: identity) }
        }
        return SecurityConfiguration(ioCapability: io, bondable: secureConnections || !deviceKeys.isEmpty || !hostKeys.isEmpty,
                                     requiresMITM: io != .noInputNoOutput, secureConnections: secureConnections ? .only : .legacyOnly,
                                     localIdentity: localIdentity)
    }

    /// An SMP PDU from the host, on a link to `central`.
    mutating func received(_ payload: [UInt8], central: BLEAddress, at now: Duration) -> [PeripheralAction] {
        if manager == nil, payload.first == 0x01 {
            if let failure {
                return [Self.smp(SMPPDU.pairingFailed(PairingFailureReason(rawValue: failure)).encoded)]
            }
            if let pairing {
                manager = SecurityManager(role: .peripheral,
                                          configuration: Self.configuration(method: pairing.method, secureConnections: pairing.secureConnections,
                                                                            deviceKeys: pairing.deviceKeys, hostKeys: pairing.hostKeys,
                                                                            identity: localAddress),
                                          localAddress: localAddress, peerAddress: central)
            }
        }
        guard manager != nil else {
            // Pairing Request (0x01) → Pairing Failed, Pairing Not Supported (0x05).
            return payload.first == 0x01 ? [Self.smp([0x05, 0x05])] : []
        }
        return feed(.received(payload), at: now)
    }

    /// The host started encryption.
    mutating func encryptionRequested(ediv: UInt16, rand: UInt64, at now: Duration) -> VirtualEncryptionKey {
        if var manager, manager.isPairing {
            let effects = manager.handle(.ltkRequested(ediv: ediv, rand: rand), now: now)
            self.manager = manager
            for case .replyLTK(let key) in effects { return .key(key) }
            return .none
        }
        return wasEncrypted ? .simulated : .none
    }

    /// The link is encrypted: a pairing under way goes on to its key distribution.
    mutating func encrypted(at now: Duration) -> [PeripheralAction] {
        guard manager?.isPairing == true else { return [] }
        return feed(.encryptionChanged(status: 0, enabled: true), at: now)
    }

    /// The security the recorded link had once encrypted: authenticated after a pairing by
    /// Passkey Entry or Numeric Comparison, else encrypted (Just Works, or a bond whose level the
    /// recording does not say).
    var recordedLevel: SecurityLevel {
        if let pairing, pairing.method != "just-works" { return .authenticated }
        return .encrypted
    }

    /// The level the replayed link has once encrypted: the replay's own pairing's, else (a
    /// simulated bond's encryption) the recorded one.
    var liveLevel: SecurityLevel {
        if let security = manager?.security, security.isEncrypted { return security.isAuthenticated ? .authenticated : .encrypted }
        return recordedLevel
    }

    /// The SMP timeout of a pairing under way.
    var deadline: Duration? { manager?.deadline }

    mutating func advance(to now: Duration) -> [PeripheralAction] {
        guard let deadline, deadline <= now else { return [] }
        return feed(.tick, at: now)
    }

    /// The link ended: the next one starts afresh.
    mutating func linkDown() {
        manager = nil
    }

    private mutating func feed(_ event: SecurityEvent, at now: Duration) -> [PeripheralAction] {
        guard var manager else { return [] }
        var pending = [event]
        var actions: [PeripheralAction] = []
        // The replay answers its own prompts at once: each answer is one more event, a few at most.
        var steps = 0
        while !pending.isEmpty, steps < 8 {
            steps += 1
            let effects = manager.handle(pending.removeFirst(), now: now)
            for effect in effects {
                switch effect {
                case .send(let pdu):
                    actions.append(Self.smp(pdu.encoded))
                case .displayPasskey(let passkey):
                    warn("replay: the replayed device shows passkey \(Self.sixDigits(passkey)) (a simulated pairing; the recording kept no key)")
                case .confirmNumericValue:
                    pending.append(.numericComparison(accepted: true))
                case .requestPasskey:
                    warn("replay: the replayed device cannot type a passkey; the simulated pairing is cancelled")
                    pending.append(.userCancelled)
                default:
                    break
                }
            }
        }
        self.manager = manager
        return actions
    }

    private static func smp(_ payload: [UInt8]) -> PeripheralAction {
        .send(L2CAPFrame(channel: L2CAPFrame.securityManager, payload: payload))
    }

    private static func sixDigits(_ value: UInt32) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }
}
