import BLEProtocol
import HAL
import Transports

/// Runs any sans-IO peripheral (`VirtualPeripheral`: the mirror, a scale, a cassette's device, a
/// profile file's) on a real controller, through our host in the peripheral role: what the
/// virtual controller does for it in-process, done over HCI.
///
/// It advertises what the peripheral advertises (legacy with its scan response, or one extended
/// advertisement; from the peripheral's own static random address when it has one, else the
/// controller's public address), accepts one central at a time, feeds the peripheral each L2CAP
/// frame of the link and sends what it answers, runs its deadlines on the injected clock, turns
/// its parameter requests into L2CAP Connection Parameter Update Requests, and advertises again
/// when the link ends. Everything it does is told to `observer` (the CLI's screen, JSON lines and
/// recording), the ATT PDUs both ways included.
///
/// One loop takes the host's events, the timer's ticks and the keys in order, so the peripheral
/// value is only ever touched by one step at a time, and a send that waits for the controller's
/// buffers holds the next step back (the air's own flow control).
package actor PeripheralHost {
    /// Which advertising form to use.
    package enum AdvertisingChoice: String, Sendable, CaseIterable {
        /// The peripheral's own form; extended only when its data does not fit legacy PDUs.
        case automatic
        /// Legacy PDUs: what does not fit 31 bytes goes to the scan response.
        case legacy
        /// One extended advertisement with everything, advertising data and scan response alike
        /// (for centrals that never see scan responses, such as bumble's).
        case extended
    }

    package struct Options: Sendable {
        package var advertising = AdvertisingChoice.automatic
        /// Advertise from the controller's public address even when the peripheral has a random one.
        package var publicAddress = false
        /// Replaces the advertised name.
        package var name: String?
        /// `serve --pairing required`: every ATT request but Exchange MTU is refused until the
        /// link has this security (``ATTSecurityGate``); nil: each attribute's own requirement only.
        package var requiredSecurity: SecurityLevel?
        /// `serve --privacy`: advertise from resolvable private addresses made with this IRK
        /// (ours, kept in the bond store and distributed when pairing), renewed as it says; nil:
        /// from the identity address.
        package var privacy: PrivateAddressRotation?

        package init(advertising: AdvertisingChoice = .automatic, publicAddress: Bool = false, name: String? = nil,
                     requiredSecurity: SecurityLevel? = nil, privacy: PrivateAddressRotation? = nil) {
            self.advertising = advertising
            self.publicAddress = publicAddress
            self.name = name
            self.requiredSecurity = requiredSecurity
            self.privacy = privacy
        }
    }

    /// What happened, for whoever shows or records it.
    package enum Event: Hashable, Sendable {
        /// Advertising (again), with the address it advertises from.
        case advertising(AdvertisingSetup, address: BLEAddress?)
        /// The controller refused to advertise again (after a disconnect).
        case advertisingFailed(String)
        case connected(PeripheralLinkInfo)
        /// An ATT PDU from the central.
        case fromCentral([UInt8])
        /// An ATT PDU to the central.
        case toCentral([UInt8])
        case parametersChanged(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
        case disconnected(reason: UInt8)
        /// The link's encryption changed.
        case securityChanged(LinkSecurity)
        /// A pairing, or encryption with a bond's key, ended (`serve --pairing`).
        case secured(SecuringOutcome)
    }

    private enum Input: Sendable {
        case host(PeripheralEvent)
        case tick
        case key(Character)
        /// What the device behind a relaying peripheral said (`relay`).
        case device(RelayDeviceInput)
        case end
    }

    private let host: HCIHost
    private var peripheral: any VirtualPeripheral
    private let timebase: Timebase
    private let options: Options
    private let observer: @Sendable (Event) -> Void
    /// Hears what a relaying peripheral wants of its device, after each step.
    private let toDevice: @Sendable ([RelayForward]) -> Void
    private let inputs: AsyncStream<Input>
    private nonisolated let input: AsyncStream<Input>.Continuation
    /// The central's link, while one is connected.
    private var link: UInt16?
    /// The security the link has now, for `options.requiredSecurity`.
    private var linkLevel = SecurityLevel.none
    private var timer: Task<Void, Never>?
    private var timerDeadline: Duration?
    private var signalingIdentifier: UInt8 = 0
    /// What advertises now, and the peripheral's advertising it came from.
    private var advertisedFrom: VirtualAdvertising?
    private var advertisingOn = false
    /// Our private address and when it is renewed (`options.privacy`).
    private var privacy: PrivateAddressRotation?
    private var random = SecurityRandom.system

    package init(host: HCIHost, peripheral: any VirtualPeripheral, clock: any Clock<Duration>, options: Options = Options(),
                 observer: @escaping @Sendable (Event) -> Void = { _ in },
                 forward: @escaping @Sendable ([RelayForward]) -> Void = { _ in }) {
        self.host = host
        toDevice = forward
        self.peripheral = peripheral
        timebase = Timebase(clock)
        self.options = options
        privacy = options.privacy
        self.observer = observer
        (inputs, input) = AsyncStream.makeStream(of: Input.self)
    }

    /// A key pressed on the screen: the peripheral acts on it in turn (if it takes keys).
    package nonisolated func press(_ key: Character) {
        input.yield(.key(key))
    }

    /// What the device behind a relaying peripheral said: fed to it in turn, after whatever
    /// came before (`RelayingPeripheral`).
    package nonisolated func deviceSaid(_ said: RelayDeviceInput) {
        input.yield(.device(said))
    }

    /// The device's keys and state now, when it has any (`ControllablePeripheral`).
    package var device: (controls: [PeripheralControl], state: String)? {
        guard let device = peripheral as? any ControllablePeripheral else { return nil }
        return (device.controls, device.stateSummary)
    }

    /// Advertises and serves until the task is cancelled. Throws when the controller refuses to
    /// advertise at the start (nothing could be served), or when it goes away.
    package func run() async throws(BLEError) {
        let roleEvents = await host.peripheralRole()
        let input = input
        let forward = Task {
            for await event in roleEvents { input.yield(.host(event)) }
            input.yield(.end)
        }
        defer {
            forward.cancel()
            timer?.cancel()
        }
        try await advertiseIfDue()
        rescheduleTimer()
        var controllerGone = false
        loop: for await next in inputs {
            let now = timebase.now
            switch next {
            case .end:
                controllerGone = true
                break loop
            case .tick:
                timerDeadline = nil
                await execute(peripheral.advance(to: now))
                await reconcileAdvertising()
            case .key(let key):
                guard var device = peripheral as? any ControllablePeripheral else { continue }
                let actions = device.perform(key, at: now)
                peripheral = device
                await execute(actions)
                await reconcileAdvertising()
            case .device(let said):
                guard var relay = peripheral as? any RelayingPeripheral else { continue }
                let actions = relay.device(said, at: now)
                peripheral = relay
                await execute(actions)
                await reconcileAdvertising()
            case .host(let event):
                await handle(event, at: now)
            }
            if var relay = peripheral as? any RelayingPeripheral {
                let forwards = relay.takeForwards()
                peripheral = relay
                if !forwards.isEmpty { toDevice(forwards) }
            }
            await pump(at: timebase.now)
            rescheduleTimer()
        }
        if let link {
            // A clean end for the central before the controller is closed.
            await host.endPeripheralLink(link, reason: 0x13)
            peripheral.linkDown(reason: 0x16, at: timebase.now)
            self.link = nil
        }
        await host.stopAdvertising()
        if controllerGone, !Task.isCancelled {
            throw await host.failureReason ?? .transport("the controller closed the link")
        }
    }

    private func handle(_ event: PeripheralEvent, at now: Duration) async {
        switch event {
        case .connected(let info):
            guard link == nil else {
                // One central at a time, as the devices served here do.
                await host.disconnectPeripheralLink(info.handle, reason: 0x13)
                return
            }
            link = info.handle
            linkLevel = .none
            advertisingOn = false
            observer(.connected(info))
            let parameters = VirtualLinkParameters(central: info.central, interval: info.interval, latency: info.latency,
                                                   supervisionTimeout: info.supervisionTimeout)
            await execute(peripheral.linkUp(parameters, at: now))
            if peripheral.advertisesWhileConnected { try? await advertiseIfDue() }
        case .frame(let handle, let frame):
            guard handle == link else { return }
            if frame.channel == L2CAPFrame.att { observer(.fromCentral(frame.payload)) }
            if frame.channel == L2CAPFrame.att, let required = options.requiredSecurity {
                switch ATTSecurityGate(required: required).verdict(for: frame.payload, link: linkLevel) {
                case .pass: break
                case .drop: return
                case .refuse(let answer):
                    await execute([.send(L2CAPFrame(channel: L2CAPFrame.att, payload: answer))])
                    return
                }
            }
            await execute(peripheral.received(frame, at: now))
        case .parametersChanged(let handle, let interval, let latency, let timeout):
            guard handle == link else { return }
            observer(.parametersChanged(interval: interval, latency: latency, supervisionTimeout: timeout))
            await execute(peripheral.linkChanged(.parametersUpdated(interval: interval, latency: latency, supervisionTimeout: timeout), at: now))
        case .disconnected(let handle, let reason):
            guard handle == link else { return }
            link = nil
            peripheral.linkDown(reason: reason, at: now)
            observer(.disconnected(reason: reason))
            do throws(BLEError) { try await advertiseIfDue() } catch { observer(.advertisingFailed("\(error)")) }
        case .securityChanged(let handle, let security):
            guard handle == link else { return }
            observer(.securityChanged(security))
            linkLevel = Self.level(security)
            await execute(peripheral.securityChanged(linkLevel, at: now))
        case .secured(let handle, let outcome):
            guard handle == link else { return }
            observer(.secured(outcome))
        case .advertisingEnded:
            advertisingOn = false
            // Ended by the controller's own limit, not a connection: start again.
            if link == nil {
                do throws(BLEError) { try await advertiseIfDue() } catch { observer(.advertisingFailed("\(error)")) }
            }
        }
    }

    /// Carries out what the peripheral asked, in order; frames in a row go to the host together.
    private func execute(_ actions: [PeripheralAction]) async {
        var frames: [L2CAPFrame] = []
        for (index, action) in actions.enumerated() {
            guard let link else { return }
            if case .send(let frame) = action {
                if frame.channel == L2CAPFrame.att { observer(.toCentral(frame.payload)) }
                frames.append(frame)
                let nextSends: Bool
                if index + 1 < actions.count, case .send = actions[index + 1] { nextSends = true } else { nextSends = false }
                if nextSends { continue }
                do throws(BLEError) { try await host.sendL2CAP(handle: link, frames: frames) } catch { return }
                frames = []
                continue
            }
            switch action {
            case .send:
                break
            case .disconnect(let reason):
                await host.disconnectPeripheralLink(link, reason: Self.hostReason(reason))
            case .vanish:
                // A real controller cannot go quiet on a link; ending it is the nearest.
                await host.disconnectPeripheralLink(link, reason: 0x13)
            case .requestParameters(let minimum, let maximum, let latency, let timeout):
                signalingIdentifier = signalingIdentifier == 0xFF ? 1 : signalingIdentifier + 1
                let request = LESignalingPacket.connectionParameterUpdateRequest(identifier: signalingIdentifier, minInterval: minimum,
                                                                                 maxInterval: maximum, latency: latency, timeout: timeout)
                try? await host.sendL2CAP(handle: link, channel: L2CAPFrame.leSignaling, payload: request.encoded)
            }
        }
    }

    /// A streaming peripheral's next frames, a few at a time (the sends wait for the
    /// controller's buffers); another tick follows while it has more.
    private func pump(at now: Duration) async {
        guard let link else { return }
        let frames = peripheral.framesToSend(room: 32, at: now)
        guard !frames.isEmpty else { return }
        for frame in frames where frame.channel == L2CAPFrame.att { observer(.toCentral(frame.payload)) }
        do throws(BLEError) { try await host.sendL2CAP(handle: link, frames: frames) } catch { return }
        input.yield(.tick)
    }

    /// The Disconnect command takes only some reasons (Core Vol 4 Part E §7.1.6); the others a
    /// peripheral may ask for (0x08 a link lost to supervision) become remote user terminated.
    /// What the attribute database's levels make of the link's security (Vol 3 Part C §10.2).
    static func level(_ security: LinkSecurity) -> SecurityLevel {
        guard security.isEncrypted else { return .none }
        return security.isAuthenticated ? .authenticated : .encrypted
    }

    static func hostReason(_ reason: UInt8) -> UInt8 {
        [0x05, 0x13, 0x14, 0x15, 0x1A, 0x29, 0x3B].contains(reason) ? reason : 0x13
    }

    private func rescheduleTimer() {
        // A private address is renewed while advertising; not under a connected central's feet.
        let renewal = advertisingOn && link == nil ? privacy?.renewalDue : nil
        let deadline = [peripheral.nextDeadline, renewal].compactMap { $0 }.min()
        guard deadline != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = deadline
        guard let deadline else { return }
        let timebase = timebase
        let input = input
        timer = Task {
            guard (try? await timebase.sleep(until: deadline)) != nil else { return }
            input.yield(.tick)
        }
    }

    // MARK: advertising

    /// A broadcaster advertises only while it has something to say (a scale with someone on it)
    /// and says something new with each reading: advertising follows the device, on with new data,
    /// or off.
    private func reconcileAdvertising() async {
        guard link == nil || peripheral.advertisesWhileConnected else { return }
        if peripheral.isAdvertising {
            let renewing = advertisingOn && link == nil && privacy?.isDue(at: timebase.now) == true
            guard !advertisingOn || peripheral.advertising != advertisedFrom || renewing else { return }
            do throws(BLEError) { try await advertiseIfDue() } catch { observer(.advertisingFailed("\(error)")) }
        } else if advertisingOn {
            await host.stopAdvertising()
            advertisingOn = false
        }
    }

    private func advertiseIfDue() async throws(BLEError) {
        guard peripheral.isAdvertising, link == nil || peripheral.advertisesWhileConnected else { return }
        let advertising = peripheral.advertising
        let localAddress = await host.localAddress
        let identity = Self.randomAddress(for: peripheral.address, publicAddress: options.publicAddress, controllerHasPublic: localAddress != nil)
        let extended = await host.supportsExtendedAdvertising()
        let form = Self.form(for: advertising.form, choice: options.advertising, name: options.name, extendedAvailable: extended)
        var setup = AdvertisingSetup(form: form, connectable: advertising.connectable, interval: advertising.interval, randomAddress: identity)
        if var rotation = privacy, let identityAddress = identity ?? localAddress {
            do throws(SecurityCryptoError) {
                let address = try rotation.address(at: timebase.now, random: &random)
                privacy = rotation
                setup.randomAddress = address
                setup.identityAddress = identityAddress
            } catch {
                observer(.advertisingFailed("no private address could be made (\(error)); advertising from \(identityAddress)"))
            }
        }
        do {
            try await host.advertise(setup)
        } catch {
            guard setup.identityAddress != nil else { throw error }
            // A controller that refuses the private address (LE Set Random Address while it
            // is busy, or not at all): the identity instead, and say so.
            observer(.advertisingFailed("the controller refused the private address (\(error)); advertising from the identity address"))
            privacy = nil
            setup.randomAddress = identity
            setup.identityAddress = nil
            try await host.advertise(setup)
        }
        advertisedFrom = advertising
        advertisingOn = true
        observer(.advertising(setup, address: setup.randomAddress ?? localAddress))
    }

    /// The peripheral's own address when it is a static random one (so a served device keeps the
    /// address a client knows it by); otherwise the controller's public address (nil), or, for a
    /// controller without one, the peripheral's address made static random.
    static func randomAddress(for address: BLEAddress, publicAddress: Bool, controllerHasPublic: Bool) -> BLEAddress? {
        let isStatic = address.kind == .random && (address.bytes.first ?? 0) & 0xC0 == 0xC0
        if isStatic, !publicAddress { return address }
        if controllerHasPublic { return nil }
        var bytes = address.bytes
        if !bytes.isEmpty { bytes[0] |= 0xC0 }
        return BLEAddress(bytes: bytes, kind: .random)
    }

    /// The form to advertise in: the peripheral's, renamed, moved to the form asked for.
    static func form(for form: VirtualAdvertising.Form, choice: AdvertisingChoice, name: String?, extendedAvailable: Bool)
        -> AdvertisingSetup.Form {
        var structures: [[UInt8]]
        var responseStructures: [[UInt8]]
        switch form {
        case .legacy(let data, let response):
            structures = ADStructures.split(data)
            responseStructures = ADStructures.split(response)
        case .extended(let data):
            structures = ADStructures.split(data)
            responseStructures = []
        }
        if let name {
            let isName: ([UInt8]) -> Bool = { $0.count >= 2 && ($0[1] == 0x08 || $0[1] == 0x09) }
            let wasInResponse = responseStructures.contains(where: isName)
            structures.removeAll(where: isName)
            responseStructures.removeAll(where: isName)
            let named = ADStructures.name(name, room: 254)
            if wasInResponse { responseStructures.append(named) } else { structures.append(named) }
        }
        let all = structures + responseStructures
        let wantsExtended: Bool
        switch choice {
        case .extended: wantsExtended = true
        case .legacy: wantsExtended = false
        case .automatic:
            if case .extended = form { wantsExtended = true } else {
                wantsExtended = ADStructures.length(structures) > 31 || ADStructures.length(responseStructures) > 31
            }
        }
        if wantsExtended, extendedAvailable || choice == .extended {
            return .extended(data: Array(all.joined()))
        }
        // Legacy: the advertising PDU's structures first, then what overflows into the scan
        // response; a name that still does not fit is shortened.
        var data: [[UInt8]] = []
        var response: [[UInt8]] = []
        for structure in structures + responseStructures {
            let inPrimary = structures.contains(structure)
            if inPrimary, ADStructures.length(data) + structure.count <= 31 {
                data.append(structure)
            } else if ADStructures.length(response) + structure.count <= 31 {
                response.append(structure)
            } else if structure.count >= 2, structure[1] == 0x08 || structure[1] == 0x09 {
                let room = 31 - ADStructures.length(response) - 2
                if room > 0 { response.append(ADStructures.shortName(structure, room: room)) }
            }
        }
        return .legacy(advertisingData: Array(data.joined()), scanResponse: Array(response.joined()))
    }
}

/// AD structures (Core Supplement Part A §1): length, type, data.
enum ADStructures {
    /// The structures of `bytes`, each with its length byte; a malformed tail is dropped.
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            guard length > 0, index + 1 + length <= bytes.count else { break }
            out.append(Array(bytes[index...(index + length)]))
            index += 1 + length
        }
        return out
    }

    static func length(_ structures: [[UInt8]]) -> Int { structures.reduce(0) { $0 + $1.count } }

    /// Complete Local Name, cut (as Shortened Local Name) to `room` bytes of name.
    static func name(_ name: String, room: Int) -> [UInt8] {
        let bytes = Array(name.utf8)
        if bytes.count <= room { return [UInt8(bytes.count + 1), 0x09] + bytes }
        return [UInt8(room + 1), 0x08] + bytes.prefix(room)
    }

    static func shortName(_ structure: [UInt8], room: Int) -> [UInt8] {
        let name = Array(structure.dropFirst(2).prefix(room))
        return [UInt8(name.count + 1), 0x08] + name
    }
}
