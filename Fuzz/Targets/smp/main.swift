import BLEProtocol
import FuzzSupport
import Glibc
import HAL

/// The Security Manager: its PDU parser, and the state machine of both roles driven by what the
/// fuzzer writes. The first byte picks the mode and configuration:
/// - mode 0, a hostile peer: one Security Manager fed raw SMP bytes (each parsed, and whatever
///   parses must write back to the same bytes) mixed with the host's events (pair, passkeys,
///   answers, LTK Requests, encryption changes, time, a disconnect);
/// - mode 1, a damaged link: two Security Managers paired against each other while the fuzzer
///   delivers, drops, repeats, corrupts and reorders their PDUs and plays both users and the clock.
/// After every step: a timed-out link never sends again; no pairing is under way without a
/// deadline, nor a deadline without one; every PDU a manager sends parses back to itself; an
/// encrypted link's key is 7–16 bytes; and when both sides report a pairing with a bond, their
/// keys agree (each direction's LTK on one side is the other's).
runFuzzer { bytes in
    var input = FuzzInput(Array(bytes.prefix(2048)))

    func check(_ condition: Bool, _ what: @autoclosure () -> String) {
        if !condition {
            let words = Array("smp invariant broken: \(what())\n".utf8)
            _ = words.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            abort()
        }
    }

    func configuration(_ byte: UInt8) -> SecurityConfiguration {
        let io = IOCapability(rawValue: byte % 5) ?? .noInputNoOutput
        let sc: SecurityConfiguration.SecureConnections = [.preferred, .only, .legacyOnly][Int(byte >> 3) % 3]
        return SecurityConfiguration(ioCapability: io, acceptsPairing: byte & 0x80 == 0, bondable: byte & 0x40 == 0,
                                     requiresMITM: byte & 0x20 != 0, secureConnections: sc,
                                     minimumKeySize: 7 + Int(byte >> 5), maximumKeySize: 16 - Int(byte & 0x07),
                                     localIdentity: byte & 0x10 == 0 ? LocalIdentity(irk: SecurityKey(number: 0x1D), address: address(0x11, .public)) : nil)
    }

    func address(_ last: UInt8, _ kind: BLEAddress.Kind) -> BLEAddress {
        BLEAddress(bytes: [0xC0, 0, 0, 0, 0, last], kind: kind) ?? BLEAddress(bytes: [0, 0, 0, 0, 0, 0])!
    }

    func inspect(_ manager: SecurityManager, _ effects: [SecurityEffect], wasTimedOut: Bool) {
        check(manager.isPairing == (manager.deadline != nil), "isPairing \(manager.isPairing) but deadline \(String(describing: manager.deadline))")
        if manager.security.isEncrypted { check((7...16).contains(manager.security.keySize), "key size \(manager.security.keySize)") }
        for case .send(let pdu) in effects {
            check(!wasTimedOut, "\(pdu.name) sent after the SMP timeout")
            check((try? SMPPDU(parsing: pdu.encoded)) == pdu, "\(pdu.name) does not read back")
        }
    }

    let head = input.byte()
    let bond = head & 0x02 != 0
        ? Bond(identity: address(0x22, .public), irk: SecurityKey(number: 3), centralKey: EncryptionKey(ltk: SecurityKey(number: 5)),
               peripheralKey: EncryptionKey(ltk: SecurityKey(number: 7), ediv: 0x1234, rand: 99), isAuthenticated: head & 0x04 != 0,
               isSecureConnections: true, keySize: 16)
        : nil
    var now = Duration.zero

    if head & 0x01 == 0 {
        // Mode 0: a hostile peer.
        let role: SecurityManager.Role = head & 0x08 == 0 ? .central : .peripheral
        var manager = SecurityManager(role: role, configuration: configuration(input.byte()), localAddress: address(1, .random),
                                      peerAddress: address(2, .public), bond: bond, random: .seeded(UInt64(head)))
        while !input.isAtEnd {
            let event: SecurityEvent
            switch input.byte() % 12 {
            case 0, 1, 2:
                let pdu = input.chunk()
                if let parsed = try? SMPPDU(parsing: pdu) { check(parsed.encoded == pdu, "a parsed PDU writes back differently") }
                event = .received(pdu)
            case 3: event = .pair
            case 4: event = .secure(authenticated: input.byte() & 1 == 1)
            case 5: event = .requestSecurity
            case 6: event = .passkeyEntered(input.u32() % 1_200_000)
            case 7: event = .numericComparison(accepted: input.byte() & 1 == 1)
            case 8: event = input.byte() & 1 == 1 ? .userCancelled : .disconnected
            case 9: event = .ltkRequested(ediv: input.u16(), rand: UInt64(input.u32()))
            case 10: event = .encryptionChanged(status: input.byte() % 4 == 0 ? 0 : input.byte(), enabled: input.byte() & 1 == 1)
            default:
                now += .milliseconds(Int(input.u16()) * 10)
                event = .tick
            }
            let wasTimedOut = manager.timedOut
            let effects = manager.handle(event, now: now)
            inspect(manager, effects, wasTimedOut: wasTimedOut)
        }
        return
    }

    // Mode 1: a damaged link between two of ours.
    var central = SecurityManager(role: .central, configuration: configuration(input.byte()), localAddress: address(1, .random),
                                  peerAddress: address(2, .public), bond: bond, random: .seeded(1))
    var peripheral = SecurityManager(role: .peripheral, configuration: configuration(input.byte()), localAddress: address(2, .public),
                                     peerAddress: address(1, .random), bond: bond, random: .seeded(2))
    // In flight: (to the central?, bytes).
    var wire: [(Bool, [UInt8])] = []
    var shown: UInt32?
    var outcomes: [Bool: [PairingOutcome]] = [:]

    func apply(_ event: SecurityEvent, toCentral: Bool) {
        let wasTimedOut = toCentral ? central.timedOut : peripheral.timedOut
        let effects = toCentral ? central.handle(event, now: now) : peripheral.handle(event, now: now)
        inspect(toCentral ? central : peripheral, effects, wasTimedOut: wasTimedOut)
        for effect in effects {
            switch effect {
            case .send(let pdu): if wire.count < 64 { wire.append((!toCentral, pdu.encoded)) }
            case .startEncryption(let key):
                for answer in peripheral.handle(.ltkRequested(ediv: key.ediv, rand: key.rand), now: now) {
                    if case .replyLTK(let given) = answer {
                        let status: UInt8 = given == key.ltk ? 0 : 0x3D
                        apply(.encryptionChanged(status: status, enabled: status == 0), toCentral: true)
                        apply(.encryptionChanged(status: status, enabled: status == 0), toCentral: false)
                    } else if case .rejectLTKRequest = answer {
                        apply(.encryptionChanged(status: 0x06, enabled: false), toCentral: true)
                    }
                }
            case .displayPasskey(let passkey): shown = passkey
            case .paired(let outcome): outcomes[toCentral, default: []].append(outcome)
            default: break
            }
        }
    }

    apply(.pair, toCentral: true)
    while !input.isAtEnd {
        switch input.byte() % 10 {
        case 0, 1, 2, 3: // deliver the next PDU
            guard !wire.isEmpty else { continue }
            let (toCentral, pdu) = wire.removeFirst()
            apply(.received(pdu), toCentral: toCentral)
        case 4: // drop one
            if !wire.isEmpty { wire.remove(at: Int(input.byte()) % wire.count) }
        case 5: // corrupt one byte of one
            guard !wire.isEmpty else { continue }
            let index = Int(input.byte()) % wire.count
            var pdu = wire[index].1
            if !pdu.isEmpty { pdu[Int(input.byte()) % pdu.count] ^= input.byte() | 1 }
            wire[index].1 = pdu
        case 6: // repeat or swap
            guard wire.count >= 2 else { continue }
            if input.byte() & 1 == 0 { wire.swapAt(0, 1) } else if wire.count < 64 { wire.append(wire[0]) }
        case 7: // a user types (the shown passkey, or another)
            let passkey = input.byte() & 1 == 0 ? (shown ?? 123_456) : input.u32() % 1_000_000
            apply(.passkeyEntered(passkey), toCentral: input.byte() & 1 == 0)
        case 8: // a user answers the comparison, or cancels
            let toCentral = input.byte() & 1 == 0
            apply(input.byte() % 4 == 0 ? .userCancelled : .numericComparison(accepted: input.byte() % 8 != 0), toCentral: toCentral)
        default: // time passes; sometimes the central starts again
            now += .milliseconds(Int(input.u16()) * 10)
            apply(.tick, toCentral: true)
            apply(.tick, toCentral: false)
            if input.byte() % 4 == 0 { apply(.pair, toCentral: true) }
        }
    }
    // One pairing completed on each side (later ones may have completed on one side only).
    if let a = outcomes[true], let b = outcomes[false], a.count == 1, b.count == 1,
       let centralBond = a[0].bond, let peripheralBond = b[0].bond, a[0].security.isSecureConnections {
        check(centralBond.centralKey == peripheralBond.peripheralKey, "the two sides keep different Secure Connections keys")
    }
}
