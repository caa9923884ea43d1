@_spi(Fuzzing) import BLEProtocol
import HAL

/// The peripheral role: advertising, accepting a central, and handing every L2CAP frame of that
/// link to whoever plays the device (`PeripheralHost` in the Peripherals module, which runs a
/// sans-IO GATT peripheral on it). The host keeps only what the controller must hear from a host
/// whichever device is played: the advertising commands, the link's ACL credits, the answers to
/// a central's LE Remote Connection Parameter Request (the same checks as for a central's own
/// links, in `handle(_:)`), and the link's end.
extension HCIHost {
    /// The handle of the one extended advertising set this host uses.
    static let advertisingSet: UInt8 = 0

    /// Starts the peripheral role and returns its events (one listener: a second call replaces
    /// the first, whose stream ends). A central that connects while nobody listens is refused.
    package func peripheralRole() -> AsyncStream<PeripheralEvent> {
        peripheralEvents?.finish()
        // A central cannot outrun this by much: ATT requests wait for their answers. Frames past
        // this many unread are dropped, as a flood deserves.
        let (stream, continuation) = AsyncStream.makeStream(of: PeripheralEvent.self, bufferingPolicy: .bufferingOldest(4096))
        if failure != nil {
            continuation.finish()
        } else {
            peripheralEvents = continuation
        }
        return stream
    }

    /// Whether the controller can advertise with the extended commands (LE feature bit 12).
    package func supportsExtendedAdvertising() async -> Bool {
        if leFeatures == nil, let rp = try? await complete(.leReadLocalSupportedFeatures), rp.count >= 9 {
            leFeatures = rp[1...8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        return (leFeatures ?? 0) & (1 << 12) != 0
    }

    /// Advertises as `setup` says, replacing whatever advertised before. Throws when the
    /// controller refuses a step (with the command and its status), so `serve` can say so.
    package func advertise(_ setup: AdvertisingSetup) async throws(BLEError) {
        if let failure { throw failure }
        await stopAdvertising()
        let ownAddressType: UInt8 = setup.randomAddress == nil ? 0 : 1
        switch setup.form {
        case .legacy(let data, let response):
            guard data.count <= 31, response.count <= 31 else {
                throw .invalid("legacy advertising carries at most 31 bytes of data and 31 of scan response")
            }
            if let address = setup.randomAddress { try await expectSuccess(.leSetRandomAddress(address)) }
            let type: HCICommand.LegacyAdvertisingType = setup.connectable ? .connectable : (response.isEmpty ? .nonConnectable : .scannable)
            try await expectSuccess(.leSetAdvertisingParameters(interval: UInt16(setup.intervalUnits), type: type, ownAddressType: ownAddressType))
            try await expectSuccess(.leSetAdvertisingData(data))
            if type != .nonConnectable { try await expectSuccess(.leSetScanResponseData(response)) }
            try await enableAdvertising(setup, .leSetAdvertisingEnable(true))
        case .extended(let data):
            guard data.count <= 1650 else { throw .invalid("an extended advertisement carries at most 1650 bytes") }
            let set = Self.advertisingSet
            try await expectSuccess(.leSetExtendedAdvertisingParameters(handle: set, properties: setup.connectable ? .connectable : [],
                                                                       interval: setup.intervalUnits, ownAddressType: ownAddressType))
            // Before the set is enabled: a controller may otherwise advertise from no address at
            // all (bumble's stops silently).
            if let address = setup.randomAddress {
                try await expectSuccess(.leSetAdvertisingSetRandomAddress(handle: set, address: address))
            }
            for command in HCICommand.leSetExtendedAdvertisingData(handle: set, data) { try await expectSuccess(command) }
            try await enableAdvertising(setup, .leSetExtendedAdvertisingEnable(true, handle: set))
        }
    }

    /// Sends the enable with `setup` already recorded as what advertises: a central may connect
    /// (and its LE Connection Complete be taken) before the enable's Command Complete is, and
    /// that link must be opened under the address it connected to (a pairing's f5/f6 use it:
    /// the public one instead fails the DHKey check) and, for legacy advertising, must end it.
    private func enableAdvertising(_ setup: AdvertisingSetup, _ enable: HCICommand) async throws(BLEError) {
        advertisingNow = setup
        do {
            try await expectSuccess(enable)
        } catch {
            advertisingNow = nil
            throw error
        }
    }

    /// Stops advertising, if it is on (a refusal is ignored: the controller may have stopped
    /// already, on a connection).
    package func stopAdvertising() async {
        guard let current = advertisingNow, failure == nil else { return }
        advertisingNow = nil
        switch current.form {
        case .legacy: _ = try? await send(.leSetAdvertisingEnable(false))
        case .extended: _ = try? await send(.leSetExtendedAdvertisingEnable(false, handle: Self.advertisingSet))
        }
    }

    /// Why the host stopped (the controller went away, a transport error), once it has.
    package var failureReason: BLEError? { failure }

    /// Whether the host is advertising now, as far as it knows.
    package var isAdvertising: Bool { advertisingNow != nil }

    /// Ends a link on which we are the peripheral (reason 0x13 remote user terminated, 0x15
    /// power off…); its end comes as `.disconnected` when the controller confirms it.
    package func disconnectPeripheralLink(_ handle: UInt16, reason: UInt8 = 0x13) {
        guard peripheralLinks.contains(handle) else { return }
        submitDetached(.disconnect(handle: handle, reason: reason))
    }

    /// The same, waiting (at most the host's `disconnectTimeout`) until the controller confirms,
    /// so a central hears a clean end before the controller is closed.
    package func endPeripheralLink(_ handle: UInt16, reason: UInt8 = 0x13) async {
        guard peripheralLinks.contains(handle), failure == nil else { return }
        submitDetached(.disconnect(handle: handle, reason: reason))
        let clock = clock
        let deadline = configuration.disconnectTimeout
        // Unstructured, so it runs even when the caller's task is already cancelled.
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: deadline)) != nil else { return }
            await self?.wakeDisconnectWaiters(handle)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard peripheralLinks.contains(handle) else {
                continuation.resume()
                return
            }
            disconnectWaiters[handle, default: []].append(continuation)
        }
    }

    // MARK: what the controller says

    /// A central connected to our advertisement: the link is registered at once (its frames may
    /// follow in the same read) and announced; without a listener it is refused.
    func peripheralConnected(_ complete: LEConnectionComplete) {
        guard complete.status == 0 else { return }
        let ownAddress = advertisingNow?.randomAddress ?? localAddress
        let ownIdentity = advertisingNow?.identityAddress ?? ownAddress
        // Legacy advertising stops on a connection; an extended set ends with its own event.
        if case .legacy = advertisingNow?.form { advertisingNow = nil }
        guard let peripheralEvents else {
            submitDetached(.disconnect(handle: complete.handle, reason: 0x13))
            return
        }
        peripheralLinks.insert(complete.handle)
        acl.open(complete.handle)
        openSecurity(handle: complete.handle, role: .peripheral, local: ownAddress, identity: ownIdentity, peer: complete.peer)
        events?(.connected(complete.peer, link: complete.handle))
        peripheralEvents.yield(.connected(PeripheralLinkInfo(handle: complete.handle, central: complete.peer, interval: complete.interval,
                                                             latency: complete.latency, supervisionTimeout: complete.supervisionTimeout)))
    }

    func peripheralLinkClosed(handle: UInt16, reason: UInt8) {
        closeSecurity(handle: handle)
        peripheralLinks.remove(handle)
        events?(.disconnected(link: handle, DisconnectReason(hciReason: reason)))
        for fragment in acl.close(handle) { emit(.acl(fragment)) }
        receiver.close(handle)
        wakeDisconnectWaiters(handle)
        wakeACLRoomWaiters()
        peripheralEvents?.yield(.disconnected(handle: handle, reason: reason))
    }

    func advertisingSetTerminated(_ terminated: LEAdvertisingSetTerminated) {
        guard terminated.advertisingHandle == Self.advertisingSet, case .extended = advertisingNow?.form else { return }
        advertisingNow = nil
        peripheralEvents?.yield(.advertisingEnded(status: terminated.status))
    }
}
