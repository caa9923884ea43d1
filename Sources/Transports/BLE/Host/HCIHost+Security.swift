@_spi(Fuzzing) import BLEProtocol
import HAL

/// The LE Security Manager on the host's links (issue 29): one ``SecurityManager`` value per
/// link, in the link's role, created when the link opens if the host was given a
/// ``HostSecurity``. The host only routes: SMP PDUs (L2CAP CID 0x0006) in and out, the three HCI
/// commands (LE Enable Encryption as central, LTK Request Reply / Negative Reply as peripheral)
/// and the three events (Encryption Change, Key Refresh Complete, LTK Request) through
/// ``SecurityHCI``, the prompts through the ``PairingDelegate``, the SMP timeout on the injected
/// clock, and the bond store through the ``BondKeeper``.
extension HCIHost {
    /// One link's Security Manager and who waits for it.
    struct SecuredLink {
        var manager: SecurityManager
        var timer: Task<Void, Never>?
        var waiters: [CheckedContinuation<SecuringOutcome, Never>] = []
    }

    /// From now on new links pair and encrypt as `security` says (nil: they refuse pairing).
    package func useSecurity(_ security: HostSecurity?) {
        hostSecurity = security
    }

    /// The IRKs and identities of the controller's bonds: scanning reports an advertiser whose
    /// resolvable private address one of them made under its identity, and `connect(to:)` an
    /// identity goes to the private address it was seen with. A bond kept later is added.
    package func useResolvingIdentities(_ identities: [ResolvingIdentity]) {
        addressResolver = AddressResolver(identities)
    }

    /// A replayed recording's private addresses and the identities they resolved to when it was
    /// made (a cassette's `resolved` lines: the IRK was never recorded), so a replay reports and
    /// connects to the device by its identity as the live run did. Kept apart from the bonds'
    /// IRKs, which ``useResolvingIdentities(_:)`` replaces.
    package func useRecordedResolutions(_ resolutions: [BLEAddress: BLEAddress]) {
        recordedResolutions = resolutions.filter { ResolvablePrivateAddress.isResolvable($0.key) }
    }

    /// The security a link has now (not encrypted when it has no Security Manager).
    package func linkSecurity(_ handle: UInt16) -> LinkSecurity {
        securedLinks[handle]?.manager.security ?? .none
    }

    /// Central: secures `connection` — encrypts with the peer's bond when it gives what
    /// `authenticated` asks and `pair` is false, pairs otherwise — and returns how it ended.
    /// Waits at most the SMP timeout after the last PDU (the Security Manager's own deadline).
    package func secure(_ connection: BLEConnection, pair: Bool = false, authenticated: Bool = false) async throws(BLEError) -> SecuringOutcome {
        if let failure { throw failure }
        let handle = connection.handle
        guard connections[handle] === connection else { throw .disconnected(connection.disconnectReason ?? .localHostTerminated) }
        guard securedLinks[handle] != nil else {
            throw .invalid("this host was started without pairing (no bond store or IO capability given)")
        }
        // Already as secure as asked: the Security Manager would do nothing, and nothing would end the wait.
        if !pair, let manager = securedLinks[handle]?.manager, !manager.isPairing, manager.security.isEncrypted,
           !authenticated || manager.security.isAuthenticated {
            return .encrypted(manager.security)
        }
        let overdue = watchSecuring(handle)
        defer { overdue.cancel() }
        return await withCheckedContinuation { continuation in
            securedLinks[handle]?.waiters.append(continuation)
            feedSecurity(pair ? .pair : .secure(authenticated: authenticated), handle: handle)
        }
    }

    /// The deadline of a wait that the Security Manager's own timer does not cover: encrypting
    /// with a bond's key, which ends only with the controller's Encryption Change. Every 30 s,
    /// unless a pairing is under way (its SMP timeout governs), the waiters are told it timed out.
    private func watchSecuring(_ handle: UInt16) -> Task<Void, Never> {
        let clock = clock
        return Task { [weak self] in
            while (try? await clock.sleep(for: SecurityManager.timeout)) != nil {
                guard let self, await self.securingOverdue(handle) else { return }
            }
        }
    }

    /// Returns whether to keep watching (a pairing is still under way).
    private func securingOverdue(_ handle: UInt16) -> Bool {
        guard let link = securedLinks[handle], !link.waiters.isEmpty else { return false }
        if link.manager.isPairing { return true }
        securedLinks[handle]?.waiters = []
        let outcome = SecuringOutcome.failed(PairingFailure(.timeout, "the controller did not say the link was encrypted within 30 s"))
        for waiter in link.waiters { waiter.resume(returning: outcome) }
        return false
    }

    /// Peripheral: asks the central to secure the link (Security Request).
    package func requestSecurity(_ handle: UInt16) {
        feedSecurity(.requestSecurity, handle: handle)
    }

    // MARK: the host's side (called from HCIHost)

    /// A new link: its Security Manager in `role`, with the peer's bond if one is kept. `local`
    /// is the address the link was made with (f5/f6 take it); `identity` the one our IRK is
    /// distributed with: the advertised address unless that was a private one (issue 29: a
    /// central must recognise us at the address it reconnects to).
    func openSecurity(handle: UInt16, role: SecurityManager.Role, local: BLEAddress?, identity: BLEAddress? = nil, peer: BLEAddress) {
        guard let hostSecurity, let local = local ?? BLEAddress(bytes: [0, 0, 0, 0, 0, 0]) else { return }
        let bond = hostSecurity.bonds.bond(for: peer)
        var configuration = hostSecurity.configuration
        let ours = identity ?? local
        if !ResolvablePrivateAddress.isResolvable(ours) { configuration.localIdentity?.address = ours }
        let manager = SecurityManager(role: role, configuration: configuration,
                                      localAddress: local,
                                      peerAddress: peer, bond: bond, attempts: attemptsByPeer[bond?.identity ?? peer] ?? RepeatedAttempts())
        securedLinks[handle] = SecuredLink(manager: manager)
    }

    /// An SMP PDU from the peer; false when the link has no Security Manager (the caller answers).
    func securityFrame(_ payload: [UInt8], handle: UInt16) -> Bool {
        guard securedLinks[handle] != nil else { return false }
        feedSecurity(.received(payload), handle: handle)
        return true
    }

    /// An HCI event that belongs to a link's Security Manager; false when it is not one.
    func securityHCIEvent(_ event: HCIEvent) -> Bool {
        guard let (handle, securityEvent) = SecurityHCI.event(from: event) else { return false }
        if securedLinks[handle] != nil {
            feedSecurity(securityEvent, handle: handle)
        } else if case .ltkRequested = securityEvent {
            // No key for a link that has no Security Manager.
            submitDetached(SecurityHCI.longTermKeyRequestNegativeReply(handle: handle))
        }
        return true
    }

    /// The link ended: a pairing under way fails, whoever waits is told.
    func closeSecurity(handle: UInt16) {
        guard securedLinks[handle] != nil else { return }
        feedSecurity(.disconnected, handle: handle)
        if let link = securedLinks.removeValue(forKey: handle) {
            link.timer?.cancel()
            let outcome = SecuringOutcome.failed(PairingFailure(.linkLost, "the link ended"))
            for waiter in link.waiters { waiter.resume(returning: outcome) }
        }
    }

    /// Feeds one event to the link's Security Manager and carries out what it asks.
    func feedSecurity(_ event: SecurityEvent, handle: UInt16) {
        guard var link = securedLinks[handle] else { return }
        let effects = link.manager.handle(event, now: securityTime.now)
        securedLinks[handle] = link
        perform(effects, handle: handle)
        armSecurityTimer(handle)
    }

    private func perform(_ effects: [SecurityEffect], handle: UInt16) {
        guard let link = securedLinks[handle], let hostSecurity else { return }
        let manager = link.manager
        attemptsByPeer[manager.bond?.identity ?? manager.peerAddress] = manager.attempts
        let delegate = hostSecurity.delegate
        let peer = manager.peerAddress
        var outcome: SecuringOutcome?
        for effect in effects {
            switch effect {
            case .send(let pdu):
                reply(handle: handle, channel: L2CAPFrame.securityManager, payload: pdu.encoded)
            case .startEncryption, .replyLTK, .rejectLTKRequest:
                if let command = SecurityHCI.command(for: effect, handle: handle) { submitDetached(command) }
            case .displayPasskey(let passkey):
                Task { await delegate.displayPasskey(passkey, peer: peer) }
            case .requestPasskey:
                Task { [weak self] in
                    let typed = await delegate.passkey(for: peer)
                    await self?.feedSecurity(typed.map { .passkeyEntered($0) } ?? .userCancelled, handle: handle)
                }
            case .confirmNumericValue(let value):
                Task { [weak self] in
                    let answer = await delegate.compare(value, peer: peer)
                    await self?.feedSecurity(answer.map { .numericComparison(accepted: $0) } ?? .userCancelled, handle: handle)
                }
            case .securityChanged(let security):
                securityChanged(handle: handle, security)
                if !manager.isPairing, outcome == nil, !effects.contains(where: { if case .paired = $0 { true } else { false } }) {
                    outcome = .encrypted(security)
                }
            case .paired(let paired):
                outcome = .paired(paired)
                if let bond = paired.bond {
                    do throws(BondStoreError) { try hostSecurity.bonds.keep(bond) } catch { outcome = .notStored(paired, "\(error)") }
                    if let irk = bond.irk { addressResolver.add(ResolvingIdentity(irk: irk, identity: bond.identity)) }
                }
            case .pairingFailed(let failure):
                outcome = .failed(failure)
            case .bondEncryptionFailed(let status):
                outcome = .bondRejected(status: status)
            }
        }
        guard let outcome else { return }
        if peripheralLinks.contains(handle) { peripheralEvents?.yield(.secured(handle: handle, outcome)) }
        let waiters = securedLinks[handle]?.waiters ?? []
        securedLinks[handle]?.waiters = []
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// The link's encryption changed: the peripheral's device hears it (its ATT server compares).
    private func securityChanged(handle: UInt16, _ security: LinkSecurity) {
        if peripheralLinks.contains(handle) { peripheralEvents?.yield(.securityChanged(handle: handle, security)) }
    }

    /// The SMP timeout: a tick at the Security Manager's deadline.
    private func armSecurityTimer(_ handle: UInt16) {
        guard var link = securedLinks[handle] else { return }
        link.timer?.cancel()
        link.timer = nil
        if let deadline = link.manager.deadline {
            let timebase = securityTime
            link.timer = Task { [weak self] in
                guard (try? await timebase.sleep(until: deadline)) != nil else { return }
                await self?.feedSecurity(.tick, handle: handle)
            }
        }
        securedLinks[handle] = link
    }
}
