import BLEProtocol
import HAL

/// Two Security Managers on one simulated link: every PDU one sends is fed to the other, the
/// central's Start Encryption goes to the peripheral as an LTK Request and comes back to both as
/// Encryption Change the way a controller would (a reply with a different key is a MIC failure,
/// 0x3D; a negative reply gives the central 0x06 PIN or Key Missing), and each side's user does
/// what the test says with the passkeys and numbers it is shown.
struct PairingHarness {
    enum Side: Hashable { case central, peripheral }

    var central: SecurityManager
    var peripheral: SecurityManager
    var now = Duration.zero

    /// Everything each side's manager asked for, in order.
    var centralEffects: [SecurityEffect] = []
    var peripheralEffects: [SecurityEffect] = []
    /// Every PDU on the link, as (sender, PDU).
    var traffic: [(Side, SMPPDU)] = []
    /// Drop PDUs from this side (a peer that falls silent).
    var silenced: Side?
    /// The central's Encryption Change comes only once everything else settled (its controller
    /// late to say so while the peripheral already sends its keys).
    var centralLearnsEncryptionLate = false
    private var lateForCentral: [SecurityEvent] = []
    /// Rewrites a PDU before it reaches the other side (an attacker on the link).
    var tamper: ((Side, SMPPDU) -> SMPPDU)?

    /// The passkey each side's user types: nil types what the other side displayed.
    var typedPasskey: [Side: UInt32] = [:]
    /// Sides whose users type a passkey when asked (the others leave the prompt open).
    var typingUsers: Set<Side> = [.central, .peripheral]
    /// Passkey both users type when neither side displays.
    var agreedPasskey: UInt32 = 123_456
    /// What each side's user answers to a numeric comparison.
    var comparisonAnswer: [Side: Bool] = [.central: true, .peripheral: true]
    /// What each side displayed.
    var displayed: [Side: UInt32] = [:]
    var compared: [Side: UInt32] = [:]
    /// Sides whose users answer a numeric comparison only once the link is quiet (after the
    /// other side's DHKey Check has arrived, as a person slower than the peer).
    var answersLate: Set<Side> = []
    private var comparisonsWaiting: [(Side, Bool)] = []
    private var awaitingPasskey: Set<Side> = []
    private var pending: [(Side, SecurityEvent)] = []

    static let centralAddress = BLEAddress(bytes: [0xC0, 0x00, 0x00, 0x00, 0x00, 0x01], kind: .random)!
    static let peripheralAddress = BLEAddress(bytes: [0x00, 0x1B, 0xDC, 0x0A, 0x0B, 0x0C], kind: .public)!

    init(central: SecurityConfiguration, peripheral: SecurityConfiguration, centralBond: Bond? = nil, peripheralBond: Bond? = nil) {
        self.central = SecurityManager(role: .central, configuration: central, localAddress: Self.centralAddress,
                                       peerAddress: Self.peripheralAddress, bond: centralBond)
        self.peripheral = SecurityManager(role: .peripheral, configuration: peripheral, localAddress: Self.peripheralAddress,
                                          peerAddress: Self.centralAddress, bond: peripheralBond)
    }

    /// Feeds `event` to `side` and runs the link until nothing more happens.
    mutating func run(_ event: SecurityEvent, on side: Side) {
        pending.append((side, event))
        settle()
    }

    mutating func settle() {
        var steps = 0
        while true {
            while !pending.isEmpty {
                steps += 1
                precondition(steps < 10_000, "the two managers never settle")
                let (side, event) = pending.removeFirst()
                let effects = side == .central ? central.handle(event, now: now) : peripheral.handle(event, now: now)
                if side == .central { centralEffects += effects } else { peripheralEffects += effects }
                for effect in effects { carry(effect, from: side) }
            }
            if !lateForCentral.isEmpty {
                pending += lateForCentral.map { (.central, $0) }
                lateForCentral = []
                continue
            }
            if !comparisonsWaiting.isEmpty {
                pending += comparisonsWaiting.map { ($0.0, .numericComparison(accepted: $0.1)) }
                comparisonsWaiting = []
                continue
            }
            // Users answer once the link is quiet: a passkey typed after the other side shows it.
            guard let side = awaitingPasskey.first(where: { typingUsers.contains($0) && (typedPasskey[$0] != nil || displayed[other($0)] != nil || !canDisplay(other($0))) }) else { return }
            awaitingPasskey.remove(side)
            let passkey = typedPasskey[side] ?? displayed[other(side)] ?? agreedPasskey
            pending.append((side, .passkeyEntered(passkey)))
        }
    }

    private func other(_ side: Side) -> Side { side == .central ? .peripheral : .central }

    /// Whether `side` is displaying in the pairing under way (else both type the agreed passkey).
    private func canDisplay(_ side: Side) -> Bool {
        guard let method = central.pairingMethod ?? peripheral.pairingMethod, case .passkeyEntry(let display) = method else { return false }
        switch display {
        case .initiator: return side == .central
        case .responder: return side == .peripheral
        case .neither: return false
        }
    }

    private mutating func carry(_ effect: SecurityEffect, from side: Side) {
        switch effect {
        case .send(let pdu):
            traffic.append((side, pdu))
            guard silenced != side else { return }
            let delivered = tamper?(side, pdu) ?? pdu
            pending.append((other(side), .received(delivered.encoded)))
        case .startEncryption(let key):
            let answer = peripheral.handle(.ltkRequested(ediv: key.ediv, rand: key.rand), now: now)
            peripheralEffects += answer
            for reply in answer {
                switch reply {
                case .replyLTK(let given) where given == key.ltk:
                    if centralLearnsEncryptionLate {
                        lateForCentral.append(.encryptionChanged(status: 0, enabled: true))
                    } else {
                        pending.append((.central, .encryptionChanged(status: 0, enabled: true)))
                    }
                    pending.append((.peripheral, .encryptionChanged(status: 0, enabled: true)))
                case .replyLTK:
                    pending.append((.central, .encryptionChanged(status: 0x3D, enabled: false)))
                    pending.append((.peripheral, .encryptionChanged(status: 0x3D, enabled: false)))
                case .rejectLTKRequest:
                    pending.append((.central, .encryptionChanged(status: 0x06, enabled: false)))
                default:
                    carry(reply, from: .peripheral)
                }
            }
        case .displayPasskey(let passkey):
            displayed[side] = passkey
        case .requestPasskey:
            awaitingPasskey.insert(side)
        case .confirmNumericValue(let value):
            compared[side] = value
            if answersLate.contains(side) {
                comparisonsWaiting.append((side, comparisonAnswer[side] ?? true))
            } else {
                pending.append((side, .numericComparison(accepted: comparisonAnswer[side] ?? true)))
            }
        default:
            break
        }
    }

    // MARK: What happened

    func outcome(_ side: Side) -> PairingOutcome? {
        for case .paired(let outcome) in effects(side) { return outcome }
        return nil
    }

    func failure(_ side: Side) -> PairingFailure? {
        for case .pairingFailed(let failure) in effects(side) { return failure }
        return nil
    }

    func effects(_ side: Side) -> [SecurityEffect] { side == .central ? centralEffects : peripheralEffects }

    /// The PDUs `side` sent, by name.
    func sent(by side: Side) -> [String] { traffic.filter { $0.0 == side }.map { $0.1.name } }

    mutating func clearRecords() {
        centralEffects = []
        peripheralEffects = []
        traffic = []
        displayed = [:]
        compared = [:]
    }
}
