@_spi(Fuzzing) import BLEProtocol
import HAL
import Synchronization

/// Our BLE host: the HCI side of the stack, a thin actor driving sans-IO parts — the command
/// credit queue (`HCICommandFlow`), the ACL scheduler (`ACLScheduler`), ACL reassembly, the L2CAP
/// fixed-channel router with LE signalling (`ConnectionParameters` checks), and each link's ATT
/// bearer (`ATTClientTransactions` inside `ATTBearer`).
///
/// Everything the controller says is framed and parsed where its bytes arrive, by the host's
/// `HCIReceiver` on the link's reading thread: ATT on an open link goes straight to its bearer
/// from there (a notification reaches its subscriber in one hop, a chunk's values in one
/// hand-over), and everything else — events, signalling, data for a link still being opened —
/// comes to this actor in stream order through the receiver's bounded inbox. Everything the host says goes out through one ordered outbox. Every
/// awaiting call honours cancellation (it returns `BLEError.cancelled` at once and whatever it
/// started is undone or left to finish harmlessly), and every wait has a deadline.
public actor HCIHost {
    /// The host's deadlines and MTU; the defaults suit bench devices and real controllers.
    public struct Configuration: Sendable {
        /// How long a command may wait for its Command Complete or Status before it fails.
        public var commandTimeout: Duration = .seconds(5)
        /// How long opening the controller (Reset and the questions after it) may take in all: a
        /// controller that stops granting command credits would otherwise cost one command
        /// deadline per question.
        public var openTimeout: Duration = .seconds(10)
        /// How long a connection attempt may take before the host cancels it.
        public var connectTimeout: Duration = .seconds(10)
        /// The ATT transaction timeout; the specification fixes it at 30 s (Core Vol 3 Part F §3.3.3).
        public var attTimeout: Duration = .seconds(30)
        /// How long `disconnect` waits for the controller to confirm before it calls the link ended.
        public var disconnectTimeout: Duration = .seconds(2)
        /// The MTU we offer in Exchange MTU.
        public var attMTU: UInt16 = ATTMTU.preferred
        /// The default configuration.
        public init() {}
    }

    /// The deadlines and MTU this host was made with.
    public let configuration: Configuration
    private let stream: any HCIByteStream
    private let snoop: BTSnoopWriter?
    /// `--record`: sees every packet where the snoop does.
    private let tap: (any HCIPacketTap)?
    let clock: any Clock<Duration>
    let events: HostEventHandler?
    private let outbox: AsyncStream<HCIPacket>.Continuation
    private let outgoing: AsyncStream<HCIPacket>
    private var writer: Task<Void, Never>?

    /// The receive path, run where the bytes arrive (see `HCIReceiver`).
    let receiver: HCIReceiver
    /// Takes what the receiver hands the actor, in order.
    private var reader: Task<Void, Never>?
    /// Feeds the receiver from `incoming()` when the stream has no reading thread to run it on.
    private var pump: Task<Void, Never>?
    var failure: BLEError?
    /// `start` finished: the opening deadline no longer applies.
    private var opened = false
    private var nextID = 0

    // Commands.
    private var commands = HCICommandFlow()
    private var commandWaiters: [Int: CheckedContinuation<HCIEvent, any Error>] = [:]
    private var commandTimers: [Int: Task<Void, Never>] = [:]
    private var commandNames: [Int: String] = [:]

    // What the controller told us at init.
    /// The controller's public address from Read BD_ADDR; nil when it has none (all zeros) or did not say.
    public private(set) var localAddress: BLEAddress?
    /// What Read Local Version Information said, for logs; nil when the controller did not answer it.
    public private(set) var localVersion: LocalVersion?
    /// The ACL buffers the host fragments to; 27 bytes × 1 until the controller says otherwise.
    public private(set) var aclBufferSize = ACLBufferSize(length: 27, count: 1)

    // Scanning: only the scan that owns scanning may switch it off.
    private var scanning: (generation: Int, continuation: AsyncThrowingStream<LEAdvertisingReport, any Error>.Continuation)?
    private var scanGeneration = 0
    /// Bonded devices' IRKs, for advertisers using resolvable private addresses.
    var addressResolver = AddressResolver()
    /// Private addresses a replayed recording says whose they are (``useRecordedResolutions(_:)``).
    var recordedResolutions: [BLEAddress: BLEAddress] = [:]
    /// The private address each resolved identity was last seen advertising from: where LE
    /// Create Connection goes when asked to connect to the identity.
    private var privateAddressSeen = BoundedPeripheralMap<BLEAddress>(capacity: 512, policy: .evicting)

    // Connecting.
    /// The attempt in progress. It exists before LE Create Connection goes out, so a controller
    /// that answers at once (Command Status and Connection Complete back to back) cannot outrun
    /// it: a completion that comes before anyone awaits it is kept here.
    private var connectAttempt: ConnectAttempt?

    private struct ConnectAttempt {
        var id: Int
        var address: BLEAddress
        var completion: Completed?
        var continuation: CheckedContinuation<Completed, any Error>?
    }

    /// How an attempt ended: the controller's event, and the link it opened (registered as the
    /// event was taken, so what the controller says next on it — data, its end — is not lost).
    private struct Completed: Sendable {
        var event: LEConnectionComplete
        var connection: BLEConnection?
    }
    /// Attempts we cancelled whose Connection Complete has not come yet: that one is theirs.
    private var cancelledAttempts = 0

    // Links.
    var connections: [UInt16: BLEConnection] = [:]
    var acl = ACLScheduler(fragmentLength: 27, bufferCount: 1)
    private var aclRoomWaiters: [CheckedContinuation<Void, Never>] = []
    var disconnectWaiters: [UInt16: [CheckedContinuation<Void, Never>]] = [:]
    private var disconnectTimers: [UInt16: Task<Void, Never>] = [:]
    /// Links we asked to end: their Disconnection Complete carries the reason we sent, but the
    /// truth for the person is that we ended them.
    private var closingLocally: Set<UInt16> = []
    private var nextSerial = 0

    // The peripheral role (see HCIHost+Peripheral.swift).
    /// Links on which we are the peripheral: their every L2CAP frame goes to `peripheralEvents`.
    var peripheralLinks: Set<UInt16> = []
    /// Where the peripheral role's events go; nil until `peripheralRole()` is called.
    var peripheralEvents: AsyncStream<PeripheralEvent>.Continuation?
    /// What is advertising now, if anything: legacy, or the extended set's handle.
    var advertisingNow: AdvertisingSetup?
    /// The controller's LE feature bits, once asked.
    var leFeatures: UInt64?

    // The Security Manager (see HCIHost+Security.swift).
    /// What pairing offers and where bonds live; nil: no pairing.
    var hostSecurity: HostSecurity?
    /// Each link's Security Manager, by handle.
    var securedLinks: [UInt16: SecuredLink] = [:]
    /// The repeated-attempts state per peer, kept across its links (Vol 3 Part H §2.3.6).
    var attemptsByPeer: [BLEAddress: RepeatedAttempts] = [:]
    /// The Security Manager's time: offsets on the injected clock.
    let securityTime: Timebase

    /// Counters a test or benchmark can read.
    public var ignoredPackets: Int { otherIgnoredPackets + receiver.ignored }
    private var otherIgnoredPackets = 0
    /// Parameter requests refused as outside the specification's ranges.
    public private(set) var refusedParameterRequests = 0

    /// `events` hears about connections and, through each link's bearer, ATT (see `HostEvent`).
    /// `tap` sees every whole packet both ways, as `snoop` does (a cassette recorder).
    public init(stream: any HCIByteStream, snoop: BTSnoopWriter? = nil, clock: any Clock<Duration> = ContinuousClock(),
                configuration: Configuration = Configuration(), events: HostEventHandler? = nil, tap: (any HCIPacketTap)? = nil) {
        self.stream = stream
        self.snoop = snoop
        self.tap = tap
        self.clock = clock
        self.configuration = configuration
        self.events = events
        securityTime = Timebase(clock)
        receiver = HCIReceiver(snoop: snoop, tap: tap)
        (outgoing, outbox) = AsyncStream.makeStream(of: HCIPacket.self)
    }

    // MARK: life cycle

    /// Starts reading, resets the controller and learns what it can do.
    public func start() async throws(BLEError) {
        guard reader == nil else { return }
        let stream = stream
        let outgoing = outgoing
        writer = Task { [weak self] in
            for await packet in outgoing {
                do throws(HCILinkError) { try await stream.write(packet.h4Bytes) } catch {
                    await self?.fail(.transport("\(error)"))
                    return
                }
            }
        }
        let inbox = receiver.inbox
        // Isolated to this actor (it captures self): each item is handled where it resumes, with
        // no further hop. It ends when the link does (the receiver's last item says why).
        reader = Task { [self] in
            while let item = await inbox.next() { take(item) }
        }
        if let direct = stream as? any HCIReceivingStream {
            direct.deliver(to: receiver)
        } else {
            pump = stream.pump(into: receiver)
        }
        let clock = clock
        let limit = configuration.openTimeout
        let opening = Task { [weak self] in
            guard (try? await clock.sleep(for: limit)) != nil else { return }
            await self?.openingExpired(after: limit)
        }
        defer { opening.cancel() }
        try await initialize()
        opened = true
    }

    /// The overall deadline of `start`: everything still waiting fails with one message that
    /// says what the controller was asked last and whether it had stopped granting credits.
    private func openingExpired(after limit: Duration) {
        guard !opened, failure == nil else { return }
        let waiting = commandNames.min { $0.key < $1.key }?.value ?? "its next command"
        fail(.controllerStartTimedOut(limit, waitingFor: waiting, noCredits: commands.credits == 0))
    }

    private func initialize() async throws(BLEError) {
        try await expectSuccess(.reset)
        if let rp = try? await complete(.readLocalVersionInformation) { localVersion = try? LocalVersion(returnParameters: rp) }
        _ = try? await complete(.readLocalSupportedFeatures)
        var buffer = ACLBufferSize(length: 27, count: 1)
        if let rp = try? await complete(.readBufferSize), let size = try? ACLBufferSize.fromReadBufferSize(rp), size.count > 0 {
            buffer = size
        }
        // The LE buffer, when the controller has a separate one, is the one LE links use.
        if let rp = try? await complete(.leReadBufferSize), let size = try? ACLBufferSize.fromLEReadBufferSize(rp),
           size.length > 0, size.count > 0 {
            buffer = size
        }
        aclBufferSize = buffer
        acl = ACLScheduler(fragmentLength: Int(buffer.length), bufferCount: Int(buffer.count))
        if let rp = try? await complete(.readBDADDR), let address = try? ReturnParameters.bdAddress(rp),
           address.bytes.contains(where: { $0 != 0 }) {
            localAddress = address
        }
        // Disconnection Complete, Command Complete/Status, Hardware Error, Number Of Completed Packets, LE Meta…
        try await expectSuccess(.setEventMask(0x3DBF_F807_FFFB_FFFF))
        // LE: connection complete, advertising reports, connection update, remote parameter request,
        // enhanced connection complete, extended advertising reports.
        try await expectSuccess(.leSetEventMask(0x0000_0000_000F_FFFF))
    }

    /// Ends everything: scans, connections and the link to the controller.
    public func close() async {
        fail(.transport("closed"))
        outbox.finish()
        await stream.close()
        receiver.ended(nil)
        pump?.cancel()
        snoop?.close()
    }

    private func fail(_ error: BLEError) {
        guard failure == nil else { return }
        failure = error
        for id in commands.failAll() {
            commandTimers.removeValue(forKey: id)?.cancel()
            commandWaiters.removeValue(forKey: id)?.resume(throwing: error)
        }
        for (_, waiter) in commandWaiters { waiter.resume(throwing: error) }
        commandWaiters = [:]
        for timer in commandTimers.values { timer.cancel() }
        commandTimers = [:]
        commandNames = [:]
        scanning?.continuation.finish(throwing: error)
        scanning = nil
        connectAttempt?.continuation?.resume(throwing: error)
        connectAttempt = nil
        for handle in Array(securedLinks.keys) { closeSecurity(handle: handle) }
        for (handle, connection) in connections {
            receiver.close(handle)
            connection.linkClosed(.transportLost("\(error)"))
            wakeDisconnectWaiters(handle)
        }
        connections = [:]
        for waiter in aclRoomWaiters { waiter.resume() }
        aclRoomWaiters = []
        for handle in peripheralLinks {
            receiver.close(handle)
            peripheralEvents?.yield(.disconnected(handle: handle, reason: 0x08))
            wakeDisconnectWaiters(handle)
        }
        peripheralLinks = []
        advertisingNow = nil
        peripheralEvents?.finish()
    }

    func emit(_ packet: HCIPacket) {
        snoop?.record(packet.h4Bytes, sentByHost: true)
        tap?.record(packet, sentByHost: true)
        outbox.yield(packet)
    }

    // MARK: commands

    /// Sends a command and returns its Command Complete or Command Status, within the deadline.
    public func send(_ command: HCICommand, timeout: Duration? = nil) async throws(BLEError) -> HCIEvent {
        if let failure { throw failure }
        nextID += 1
        let id = nextID
        let deadline = timeout ?? configuration.commandTimeout
        do {
            return try await withTaskCancellationHandler {
                // Registered in this same turn of the actor, before any suspension: a cancellation
                // (whose handler hops onto the actor) always finds the waiter.
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HCIEvent, any Error>) in
                    do throws(HCICommandFlow.Failure) {
                        let ready = try commands.submit(id, command)
                        commandWaiters[id] = continuation
                        commandNames[id] = command.name
                        let clock = clock
                        commandTimers[id] = Task { [weak self] in
                            guard (try? await clock.sleep(for: deadline)) != nil else { return }
                            await self?.expire(id)
                        }
                        for next in ready { emit(.command(next)) }
                    } catch {
                        continuation.resume(throwing: BLEError.invalid("too many HCI commands waiting for the controller"))
                    }
                }
            } onCancel: {
                Task { await self.cancelCommand(id) }
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
    }

    /// A command whose answer nobody waits for (a reply to the controller, a parameter update).
    func submitDetached(_ command: HCICommand) {
        guard failure == nil, let ready = try? commands.submit(nil, command) else { return }
        for next in ready { emit(.command(next)) }
    }

    /// Sends a command that answers with Command Complete and returns its return parameters.
    public func complete(_ command: HCICommand) async throws(BLEError) -> [UInt8] {
        switch try await send(command) {
        case .commandComplete(_, _, let rp):
            let status = ReturnParameters.status(rp)
            guard status == 0 else { throw .commandFailed(command.name, status: status) }
            return rp
        case .commandStatus(let status, _, _):
            guard status == 0 else { throw .commandFailed(command.name, status: status) }
            return [status]
        default:
            throw .protocolError("unexpected answer to \(command.name)")
        }
    }

    func expectSuccess(_ command: HCICommand) async throws(BLEError) {
        _ = try await complete(command)
    }

    private func cancelCommand(_ id: Int) {
        guard let waiter = commandWaiters.removeValue(forKey: id) else { return }
        commandTimers.removeValue(forKey: id)?.cancel()
        commandNames[id] = nil
        _ = commands.abandon(id)
        waiter.resume(throwing: BLEError.cancelled)
    }

    private func expire(_ id: Int) {
        commandTimers[id] = nil
        let name = commandNames.removeValue(forKey: id) ?? "a command"
        let (pending, ready) = commands.expire(id)
        for next in ready { emit(.command(next)) }
        guard pending, let waiter = commandWaiters.removeValue(forKey: id) else { return }
        waiter.resume(throwing: BLEError.commandTimedOut(name))
    }

    private func answered(opcode: UInt16, credits: UInt8, with event: HCIEvent) {
        let (id, ready) = commands.answered(opcode: opcode, credits: credits)
        for next in ready { emit(.command(next)) }
        guard let id, let waiter = commandWaiters.removeValue(forKey: id) else { return }
        commandTimers.removeValue(forKey: id)?.cancel()
        commandNames[id] = nil
        waiter.resume(returning: event)
    }

    // MARK: incoming

    /// What the receive path handed over, in stream order.
    private func take(_ item: HCIReceiver.Inbound) {
        switch item {
        case .event(let event):
            guard failure == nil else { return }
            handle(event)
        case .frame(let handle, let frame):
            defer { receiver.frameHandled(handle) }
            guard failure == nil else { return }
            receiveFrame(frame, handle: handle)
        case .ended(let error):
            fail(error)
        }
    }

    private func handle(_ event: HCIEvent) {
        if securityHCIEvent(event) { return }
        switch event {
        case .commandComplete(let credits, let opcode, _):
            answered(opcode: opcode, credits: credits, with: event)
        case .commandStatus(_, let credits, let opcode):
            answered(opcode: opcode, credits: credits, with: event)
        case .numberOfCompletedPackets(let entries):
            for entry in entries {
                for fragment in acl.completed(entry.handle, count: Int(entry.count)) { emit(.acl(fragment)) }
            }
            wakeACLRoomWaiters()
        case .leAdvertisingReports(let reports):
            for var report in reports {
                if let identity = addressResolver.resolve(report.address) ?? recordedResolutions[report.address] {
                    report.resolvedIdentity = identity
                    privateAddressSeen.set(report.address, for: identity)
                    tap?.resolved(report.address, to: identity)
                }
                scanning?.continuation.yield(report)
            }
        case .leConnectionComplete(let complete):
            if complete.role == 1 {
                peripheralConnected(complete)
            } else {
                connectionCompleted(complete)
            }
        case .disconnectionComplete(let status, let handle, let reason):
            guard status == 0 else { return }
            if peripheralLinks.contains(handle) {
                peripheralLinkClosed(handle: handle, reason: reason)
            } else {
                linkClosed(handle: handle, reason: DisconnectReason(hciReason: reason))
            }
        case .leRemoteConnectionParameterRequest(let handle, let minimum, let maximum, let latency, let timeout):
            let asked = ConnectionParameters(minInterval: minimum, maxInterval: maximum, latency: latency, supervisionTimeout: timeout)
            if asked.problem == nil {
                submitDetached(.leRemoteConnectionParameterRequestReply(handle: handle, minInterval: minimum, maxInterval: maximum,
                                                                          latency: latency, timeout: timeout))
            } else {
                refusedParameterRequests += 1
                submitDetached(.leRemoteConnectionParameterRequestNegativeReply(handle: handle, reason: ConnectionParameters.unacceptable))
            }
        case .hardwareError(let code):
            fail(.transport("the controller reported hardware error 0x\(Hex.byte(code))"))
        case .leConnectionUpdateComplete(let status, let handle, let interval, let latency, let timeout):
            if status == 0, peripheralLinks.contains(handle) {
                peripheralEvents?.yield(.parametersChanged(handle: handle, interval: interval, latency: latency, supervisionTimeout: timeout))
            }
        case .leMeta(let subevent, let parameters):
            if subevent == LEAdvertisingSetTerminated.subevent, let terminated = LEAdvertisingSetTerminated(parameters: parameters) {
                advertisingSetTerminated(terminated)
            }
        case .other:
            break
        }
    }

    // MARK: scanning

    /// Advertising reports until the consumer stops; scanning is switched off when it does.
    /// A new scan replaces the one running (which ends).
    public func scan(active: Bool = true) async throws(BLEError) -> AsyncThrowingStream<LEAdvertisingReport, any Error> {
        if let failure { throw failure }
        if scanning != nil { await stopScanning() }
        scanGeneration += 1
        let generation = scanGeneration
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LEAdvertisingReport.self, bufferingPolicy: .bufferingNewest(256))
        try await expectSuccess(.leSetScanParameters(active: active, interval: 0x0060, window: 0x0030, ownAddressType: 0, filterPolicy: 0))
        try await expectSuccess(.leSetScanEnable(true, filterDuplicates: false))
        guard generation == scanGeneration else {
            // Another scan started while this one was being switched on: it owns scanning now.
            continuation.finish()
            return stream
        }
        scanning = (generation, continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.scanEnded(generation) }
        }
        return stream
    }

    private func scanEnded(_ generation: Int) async {
        // Only the scan this stream belongs to may switch scanning off.
        guard failure == nil, scanning?.generation == generation else { return }
        scanning = nil
        _ = try? await send(.leSetScanEnable(false, filterDuplicates: false))
    }

    private func stopScanning() async {
        guard let current = scanning else { return }
        // No longer the owner before it ends, so its termination switches nothing off.
        scanning = nil
        current.continuation.finish()
        _ = try? await send(.leSetScanEnable(false, filterDuplicates: false))
    }

    // MARK: connecting

    /// Connects to an advertising peripheral, cancelling the attempt when the deadline passes or
    /// the caller's task is cancelled. A bonded device's identity address is connected to at the
    /// private address it was last seen advertising from (``useResolvingIdentities(_:)``).
    public func connect(to identity: BLEAddress, timeout: Duration? = nil) async throws(BLEError) -> BLEConnection {
        if let failure { throw failure }
        // A bonded device seen behind a private address is connected to at that address (Vol 6
        // Part B §1.3.2.3: it does not answer at its identity while it advertises privately).
        let peer = privateAddressSeen[identity] ?? identity
        guard connectAttempt == nil else { throw .invalid("another connection attempt is in progress") }
        await stopScanning()
        guard connectAttempt == nil else { throw .invalid("another connection attempt is in progress") }
        nextID += 1
        let id = nextID
        connectAttempt = ConnectAttempt(id: id, address: peer)
        events?(.connecting(peer))
        let command = HCICommand.leCreateConnection(peer: peer, scanInterval: 0x0060, scanWindow: 0x0060, ownAddressType: 0,
                                                    minInterval: 0x0018, maxInterval: 0x0028, latency: 0, supervisionTimeout: 0x01F4)
        let answer: HCIEvent
        do {
            answer = try await send(command)
        } catch {
            if connectAttempt?.id == id {
                connectAttempt = nil
                // Cancelled while the command was out: the controller may be connecting anyway.
                if error == .cancelled { cancelAttempt() }
            }
            throw error
        }
        if case .commandStatus(let status, _, _) = answer, status != 0 {
            if connectAttempt?.id == id { connectAttempt = nil }
            throw .connectionFailed(peer, status: status)
        }
        let deadline = timeout ?? configuration.connectTimeout
        let clock = clock
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: deadline)) != nil else { return }
            await self?.connectTimedOut(id)
        }
        defer { timer.cancel() }
        let completed: Completed
        do {
            completed = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    guard connectAttempt?.id == id else {
                        continuation.resume(throwing: failure ?? BLEError.cancelled)
                        return
                    }
                    if let early = connectAttempt?.completion {
                        connectAttempt = nil
                        continuation.resume(returning: early)
                    } else {
                        connectAttempt?.continuation = continuation
                    }
                }
            } onCancel: {
                Task { await self.cancelConnect(id) }
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
        let complete = completed.event
        if complete.status == 0x02 { throw .connectionTimedOut(peer) } // cancelled by our deadline
        guard complete.status == 0, let connection = completed.connection else { throw .connectionFailed(peer, status: complete.status) }
        // The controller may have said the link ended in the same breath as it opened (issue 27,
        // item 13): the link was registered when the event was taken, so its end is known here.
        if let reason = connection.disconnectReason { throw .disconnected(reason) }
        // A bonded device encrypted, or any paired first, as the security policy says.
        do throws(BLEError) { try await secureOnConnect(connection) } catch {
            await disconnect(connection)
            throw error
        }
        return connection
    }

    /// Registers a link the moment its LE Connection Complete is taken, before whoever asked for
    /// it resumes: the controller's next words on it (ACL data, Disconnection Complete) may come
    /// in the same read, and must find it.
    private func openLink(_ complete: LEConnectionComplete, asked peer: BLEAddress) -> BLEConnection {
        nextSerial += 1
        let connection = BLEConnection(host: self, serial: nextSerial, handle: complete.handle,
                                       peer: complete.peer.kind == peer.kind ? complete.peer : peer,
                                       clock: clock, attTimeout: configuration.attTimeout, preferredMTU: configuration.attMTU,
                                       events: events)
        connections[complete.handle] = connection
        acl.open(complete.handle)
        openSecurity(handle: complete.handle, role: .central, local: localAddress, peer: connection.peer)
        installSecurityRemedy(connection)
        receiver.open(complete.handle, connection.bearer)
        events?(.connected(connection.peer, link: complete.handle))
        return connection
    }

    private func connectionCompleted(_ complete: LEConnectionComplete) {
        let forAnotherPeer = connectAttempt.map { complete.status == 0 && complete.peer.bytes != $0.address.bytes } ?? true
        if cancelledAttempts > 0, forAnotherPeer || complete.status == 0x02 {
            // The answer to an attempt we gave up on: a connection made anyway is ended at once.
            cancelledAttempts -= 1
            if complete.status == 0 { submitDetached(.disconnect(handle: complete.handle, reason: 0x13)) }
            return
        }
        var complete = complete
        if complete.status == 0, Self.parameterProblem(complete) != nil {
            // Interval, latency or timeout outside what the specification allows (0xFFFF each,
            // say): no link to use. It is ended with Unacceptable Connection Parameters, and the
            // attempt fails with that status (issue 27, item 18).
            submitDetached(.disconnect(handle: complete.handle, reason: ConnectionParameters.unacceptable))
            complete.status = ConnectionParameters.unacceptable
        }
        if var attempt = connectAttempt {
            let completed = Completed(event: complete, connection: complete.status == 0 ? openLink(complete, asked: attempt.address) : nil)
            if let continuation = attempt.continuation {
                connectAttempt = nil
                continuation.resume(returning: completed)
            } else {
                attempt.completion = completed
                connectAttempt = attempt
            }
        } else if complete.status == 0 {
            // A connection nobody asked for: drop it.
            submitDetached(.disconnect(handle: complete.handle, reason: 0x13))
        }
    }

    /// Why the parameters a new link came with are outside the specification's ranges (Core Vol 4
    /// Part E §7.7.65.1: interval 7.5 ms–4 s, latency at most 499, timeout 100 ms–32 s and more
    /// than twice the effective interval), or nil.
    static func parameterProblem(_ complete: LEConnectionComplete) -> String? {
        ConnectionParameters(minInterval: complete.interval, maxInterval: complete.interval, latency: complete.latency,
                             supervisionTimeout: complete.supervisionTimeout).problem
    }

    private func cancelConnect(_ id: Int) {
        guard let attempt = connectAttempt, attempt.id == id else { return }
        connectAttempt = nil
        attempt.continuation?.resume(throwing: BLEError.cancelled)
        if let early = attempt.completion {
            // It had already connected: end that link.
            if let connection = early.connection, connections[connection.handle] === connection {
                closingLocally.insert(connection.handle)
                submitDetached(.disconnect(handle: connection.handle, reason: 0x13))
            }
        } else {
            cancelAttempt()
        }
    }

    /// The controller answers LE Create Connection Cancel with a Connection Complete of status
    /// 0x02 (or, if the connection won the race, status 0): either belongs to the abandoned attempt.
    private func cancelAttempt() {
        cancelledAttempts += 1
        submitDetached(.leCreateConnectionCancel)
    }

    private func connectTimedOut(_ id: Int) async {
        guard connectAttempt?.id == id else { return }
        // The controller answers the cancel with a Connection Complete carrying status 0x02.
        if (try? await send(.leCreateConnectionCancel)) == nil, let attempt = connectAttempt, attempt.id == id {
            connectAttempt = nil
            attempt.continuation?.resume(throwing: BLEError.connectionTimedOut(attempt.address))
        }
    }

    /// Asks the controller to end `connection` and waits (at most `disconnectTimeout`) for it to
    /// say so. The deadline belongs to this link: a later link on the same handle is not touched.
    func disconnect(_ connection: BLEConnection, reason: UInt8 = 0x13) async {
        let handle = connection.handle
        guard connections[handle] === connection else { return }
        closingLocally.insert(handle)
        submitDetached(.disconnect(handle: handle, reason: reason))
        let clock = clock
        let deadline = configuration.disconnectTimeout
        disconnectTimers[handle]?.cancel()
        disconnectTimers[handle] = Task { [weak self, weak connection] in
            guard (try? await clock.sleep(for: deadline)) != nil, let connection else { return }
            await self?.disconnectOverdue(connection)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard connections[handle] === connection else {
                continuation.resume()
                return
            }
            disconnectWaiters[handle, default: []].append(continuation)
        }
    }

    private func disconnectOverdue(_ connection: BLEConnection) {
        guard connections[connection.handle] === connection else { return }
        linkClosed(handle: connection.handle, reason: .localHostTerminated)
    }

    private func linkClosed(handle: UInt16, reason: DisconnectReason) {
        let reason = closingLocally.remove(handle) != nil ? .localHostTerminated : reason
        disconnectTimers.removeValue(forKey: handle)?.cancel()
        closeSecurity(handle: handle)
        if let connection = connections.removeValue(forKey: handle) {
            connection.linkClosed(reason)
            events?(.disconnected(link: handle, reason))
        }
        // Packets the controller had not confirmed for this link come back as credits.
        for fragment in acl.close(handle) { emit(.acl(fragment)) }
        receiver.close(handle)
        wakeDisconnectWaiters(handle)
        wakeACLRoomWaiters()
    }

    func wakeDisconnectWaiters(_ handle: UInt16) {
        for waiter in disconnectWaiters.removeValue(forKey: handle) ?? [] { waiter.resume() }
    }

    func wakeACLRoomWaiters() {
        let waiters = aclRoomWaiters
        aclRoomWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    // MARK: ACL

    /// Sends one L2CAP PDU on a link, cut into ACL fragments the controller's buffers can hold.
    /// A link whose queue is full waits (bounded by the link: it ends with it) for room.
    package func sendL2CAP(handle: UInt16, channel: UInt16, payload: [UInt8]) async throws(BLEError) {
        let pdu = L2CAPFrame(channel: channel, payload: payload).encoded
        while true {
            if let failure { throw failure }
            guard connections[handle] != nil || peripheralLinks.contains(handle) else { throw .disconnected(.localHostTerminated) }
            do throws(ACLScheduler.Failure) {
                for fragment in try acl.enqueue(handle, pdu: pdu) { emit(.acl(fragment)) }
                return
            } catch .queueFull {
                await withCheckedContinuation { aclRoomWaiters.append($0) }
            } catch {
                throw .disconnected(.localHostTerminated)
            }
        }
    }

    /// Several L2CAP PDUs on one link, in order, in one call: a served stream's notifications
    /// cost one hop onto the actor for a batch instead of one each. Waits for room as
    /// `sendL2CAP` does, PDU by PDU.
    package func sendL2CAP(handle: UInt16, frames: [L2CAPFrame]) async throws(BLEError) {
        for frame in frames {
            try await sendL2CAP(handle: handle, channel: frame.channel, payload: frame.payload)
        }
    }

    /// The same without waiting, for answers the receive path must give (signalling, SMP).
    func reply(handle: UInt16, channel: UInt16, payload: [UInt8]) {
        let pdu = L2CAPFrame(channel: channel, payload: payload).encoded
        guard let fragments = try? acl.enqueue(handle, pdu: pdu) else { return }
        for fragment in fragments { emit(.acl(fragment)) }
    }

    /// A whole L2CAP PDU the receive path could not hand to a bearer itself: signalling, the
    /// security manager, or ATT on a link whose opening the actor has not finished.
    private func receiveFrame(_ frame: L2CAPFrame, handle: UInt16) {
        if peripheralLinks.contains(handle) {
            if frame.channel == L2CAPFrame.securityManager, securityFrame(frame.payload, handle: handle) { return }
            peripheralEvents?.yield(.frame(handle: handle, frame))
            return
        }
        guard let connection = connections[handle] else {
            otherIgnoredPackets += 1
            return
        }
        switch frame.channel {
        case L2CAPFrame.att:
            // Rare (a PDU that came before the link was opened here): the wait for a subscriber
            // that is behind is the receive path's, on its next chunk.
            connection.bearer.receive(frame.payload)
        case L2CAPFrame.leSignaling:
            signaling(frame.payload, on: connection.handle)
        case L2CAPFrame.securityManager:
            if securityFrame(frame.payload, handle: connection.handle) { return }
            // Started without pairing: a Pairing Request gets Pairing Failed: Pairing Not Supported.
            if frame.payload.first == 0x01 { reply(handle: connection.handle, channel: L2CAPFrame.securityManager, payload: [0x05, 0x05]) }
        default:
            otherIgnoredPackets += 1
        }
    }

    private func signaling(_ payload: [UInt8], on handle: UInt16) {
        guard let packet = try? LESignalingPacket(parsing: payload) else {
            // Not understood: reject with reason 0x0000 (Command not understood) and identifier 0 when unknown.
            let reject = LESignalingPacket.commandReject(identifier: payload.count > 1 ? payload[1] : 0, reason: 0, data: [])
            reply(handle: handle, channel: L2CAPFrame.leSignaling, payload: reject.encoded)
            return
        }
        switch packet {
        case .connectionParameterUpdateRequest(let identifier, let minimum, let maximum, let latency, let timeout):
            let asked = ConnectionParameters(minInterval: minimum, maxInterval: maximum, latency: latency, supervisionTimeout: timeout)
            let accepted = asked.problem == nil
            if !accepted { refusedParameterRequests += 1 }
            let response = LESignalingPacket.connectionParameterUpdateResponse(identifier: identifier, result: accepted ? 0 : 1)
            reply(handle: handle, channel: L2CAPFrame.leSignaling, payload: response.encoded)
            if accepted {
                submitDetached(.leConnectionUpdate(handle: handle, minInterval: minimum, maxInterval: maximum,
                                                   latency: latency, supervisionTimeout: timeout))
            }
        case .commandReject, .connectionParameterUpdateResponse:
            break
        case .other(_, let identifier, _):
            let reject = LESignalingPacket.commandReject(identifier: identifier, reason: 0, data: [])
            reply(handle: handle, channel: L2CAPFrame.leSignaling, payload: reject.encoded)
        }
    }
}
