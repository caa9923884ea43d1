import HAL

/// Phase 3 (Vol 3 Part H §2.4.3, §3.6): over the encrypted link the responder sends its keys,
/// then the initiator its own, each side only what the Pairing Response agreed; then the pairing
/// is complete and, if both sides bond, the bond is what to keep.
extension SecurityManager {
    mutating func beginKeyDistribution(now: Duration) -> [SecurityEffect] {
        guard var s = session else { return [] }
        s.stage = .distributing
        let early = s.earlyKeys
        s.earlyKeys = []
        session = s
        var effects: [SecurityEffect] = []
        if !s.isInitiator {
            effects = sendOurKeys(now: now)
            if session?.receivedEverything == true { return effects + complete(now: now) }
        } else if s.receivedEverything {
            return sendOurKeys(now: now) + complete(now: now)
        }
        for pdu in early where session?.stage == .distributing {
            effects += keyReceived(pdu, now: now)
        }
        return effects
    }

    /// The keys this side distributes: a fresh legacy LTK with EDIV and Rand, our identity.
    private mutating func sendOurKeys(now: Duration) -> [SecurityEffect] {
        guard var s = session else { return [] }
        var effects: [SecurityEffect] = []
        if s.weSend.contains(.encryptionKey) {
            let key = EncryptionKey(ltk: random.key().masked(toSize: s.keySize), ediv: random.u16(), rand: random.u64())
            s.sentKey = key
            s.sentKinds += ["ltk", "ediv-rand"]
            session = s
            effects.append(send(.encryptionInformation(ltk: key.ltk), now: now))
            effects.append(send(.centralIdentification(ediv: key.ediv, rand: key.rand), now: now))
        }
        if s.weSend.contains(.identityKey) {
            // Only offered with an identity; an all-zero IRK ("none") keeps the exchange whole otherwise.
            let identity = configuration.localIdentity ?? LocalIdentity(irk: .zero, address: localAddress)
            s.sentKinds += ["irk", "identity-address"]
            session = s
            effects.append(send(.identityInformation(irk: identity.irk), now: now))
            effects.append(send(.identityAddressInformation(identity.address), now: now))
        }
        return effects
    }

    mutating func keyReceived(_ pdu: SMPPDU, now: Duration) -> [SecurityEffect] {
        guard var s = session, s.stage == .distributing else {
            return fail(.unspecified, "\(pdu.name) arrived before the link was encrypted", now: now)
        }
        let encryptionDone = !s.peerSends.contains(.encryptionKey) || s.receivedCentralIdentification != nil
        switch pdu {
        case .encryptionInformation(let ltk) where s.peerSends.contains(.encryptionKey) && s.receivedLTK == nil:
            s.receivedLTK = ltk
        case .centralIdentification(let ediv, let rand) where s.receivedLTK != nil && s.receivedCentralIdentification == nil:
            s.receivedCentralIdentification = (ediv, rand)
        case .identityInformation(let irk) where s.peerSends.contains(.identityKey) && s.receivedIRK == nil && encryptionDone:
            s.receivedIRK = irk
        case .identityAddressInformation(let address) where s.receivedIRK != nil && s.receivedIdentity == nil:
            // An identity address is public or static random (top bits 11), never private:
            // refused as a key we do not accept (Key Rejected, Core 5.3 on).
            guard address.kind == .public || address.bytes[0] >> 6 == 0b11 else {
                return fail(.keyRejected, "the identity address \(address) is not public or static random", now: now)
            }
            s.receivedIdentity = address
        case .signingInformation:
            return fail(.unspecified, "the device sent a CSRK, which was not asked for", now: now)
        default:
            return fail(.unspecified, "\(pdu.name) arrived out of turn in key distribution", now: now)
        }
        if let kind = pdu.keyKind { s.receivedKinds.append(kind) }
        session = s
        guard s.receivedEverything else { return [] }
        return s.isInitiator ? sendOurKeys(now: now) + complete(now: now) : complete(now: now)
    }

    /// The pairing is over: what it gave, and the bond to keep when both sides bond.
    private mutating func complete(now: Duration) -> [SecurityEffect] {
        guard let s = session else { return [] }
        session = nil
        deadline = nil
        attempts.recordSuccess()
        let security = pairingSecurity(s)
        var peerKey: EncryptionKey?
        if let ltk = s.receivedLTK, let id = s.receivedCentralIdentification {
            peerKey = EncryptionKey(ltk: ltk, ediv: id.ediv, rand: id.rand)
        }
        let irk = s.receivedIRK.flatMap { $0.isZero ? nil : $0 }
        var keyNames: [String] = []
        if s.secureConnections || peerKey != nil || s.sentKey != nil { keyNames.append("ltk") }
        if irk != nil { keyNames.append("irk") }
        var kept: Bond?
        if s.bonding {
            let scKey = s.secureConnections ? s.encryptionKey.map { EncryptionKey(ltk: $0) } : nil
            let made = Bond(identity: s.receivedIdentity ?? peerAddress, irk: irk,
                            centralKey: scKey ?? peerKey, peripheralKey: scKey ?? s.sentKey,
                            isAuthenticated: s.method.isAuthenticated, isSecureConnections: s.secureConnections, keySize: s.keySize)
            bond = made
            kept = made
        }
        return [.paired(PairingOutcome(method: s.method, security: security, bond: kept, peerIdentity: s.receivedIdentity, keyNames: keyNames,
                                         sentKeyKinds: s.sentKinds, receivedKeyKinds: s.receivedKinds))]
    }
}
