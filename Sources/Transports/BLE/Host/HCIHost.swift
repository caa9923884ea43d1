import HAL
import Synchronization

/// Our BLE host: the HCI side of the stack. It owns the link to the controller, frames H4, matches
/// commands to their completions within the controller's command credits (each with a deadline),
/// runs the init sequence, scans, connects, and moves ACL data with the controller's flow control.
/// Everything the controller says arrives through one reader, in order.
public actor HCIHost {
    public struct Configuration: Sendable {
        public var commandTimeout: Duration = .seconds(5)
        public var connectTimeout: Duration = .seconds(10)
        public var attTimeout: Duration = .seconds(30)
        /// The MTU we offer in Exchange MTU.
        public var attMTU: UInt16 = 247
        public init() {}
    }

    public let configuration: Configuration
    private let stream: any HCIByteStream
    private let snoop: BTSnoopWriter?
    private let clock: any Clock<Duration>
    private let events: HostEventHandler?

    private var framer = H4Framer()
    private var reader: Task<Void, Never>?
    private var failure: BLEError?

    // Commands: the controller says how many it accepts at once (Num_HCI_Command_Packets).
    private struct PendingCommand {
        var command: HCICommand
        var continuation: CheckedContinuation<HCIEvent, any Error>
        var timer: Task<Void, Never>?
    }
    private var commandCredits = 1
    private var waitingCommands: [Int] = []
    private var sentCommands: [Int] = []
    private var pendingCommands: [Int: PendingCommand] = [:]
    private var nextID = 0
    private var writingCommands = false

    // What the controller told us at init.
    public private(set) var localAddress: BLEAddress?
    public private(set) var localVersion: LocalVersion?
    public private(set) var aclBufferSize = ACLBufferSize(length: 27, count: 1)

    // Scanning and connecting.
    private var scanContinuation: AsyncThrowingStream<LEAdvertisingReport, any Error>.Continuation?
    private var connectWaiter: (address: BLEAddress, continuation: CheckedContinuation<LEConnectionComplete, any Error>)?

    // Connections and ACL flow control (Number Of Completed Packets gives credits back).
    private var connections: [UInt16: BLEConnection] = [:]
    private var reassembler = ACLReassembler()
    private var aclCredits = 1
    private var aclQueues: [UInt16: [ACLPacket]] = [:]
    private var aclOrder: [UInt16] = []
    private var inFlight: [UInt16: Int] = [:]
    private var writingACL = false
    private var disconnectWaiters: [UInt16: [CheckedContinuation<Void, Never>]] = [:]
    /// Links we asked to end: their Disconnection Complete carries the reason we sent, but the
    /// truth for the person is that we ended them.
    private var closingLocally: Set<UInt16> = []

    /// Counters a test or benchmark can read.
    public var ignoredPackets: Int { otherIgnoredPackets + reassembler.dropped }
    private var otherIgnoredPackets = 0

    /// `events` hears about connections and, through each link's bearer, ATT (see `HostEvent`).
    public init(stream: any HCIByteStream, snoop: BTSnoopWriter? = nil, clock: any Clock<Duration> = ContinuousClock(),
                configuration: Configuration = Configuration(), events: HostEventHandler? = nil) {
        self.stream = stream
        self.snoop = snoop
        self.clock = clock
        self.configuration = configuration
        self.events = events
    }

    // MARK: life cycle

    /// Starts reading, resets the controller and learns what it can do.
    public func start() async throws(BLEError) {
        guard reader == nil else { return }
        let incoming = stream.incoming()
        reader = Task { [weak self] in
            do {
                for try await chunk in incoming {
                    guard let self else { return }
                    await self.receive(chunk)
                }
                await self?.fail(.transport("the controller closed the link"))
            } catch {
                await self?.fail(.transport("\(error)"))
            }
        }
        try await initialize()
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
        aclCredits = Int(buffer.count)
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
        await stream.close()
        snoop?.close()
    }

    private func fail(_ error: BLEError) {
        guard failure == nil else { return }
        failure = error
        for id in waitingCommands + sentCommands {
            if let pending = pendingCommands.removeValue(forKey: id) {
                pending.timer?.cancel()
                pending.continuation.resume(throwing: error)
            }
        }
        waitingCommands = []
        sentCommands = []
        scanContinuation?.finish(throwing: error)
        scanContinuation = nil
        connectWaiter?.continuation.resume(throwing: error)
        connectWaiter = nil
        for (handle, connection) in connections {
            connection.linkClosed(.transportLost("\(error)"))
            wakeDisconnectWaiters(handle)
        }
        connections = [:]
    }

    // MARK: commands

    /// Sends a command and returns its Command Complete or Command Status, within the deadline.
    public func send(_ command: HCICommand, timeout: Duration? = nil) async throws(BLEError) -> HCIEvent {
        if let failure { throw failure }
        nextID += 1
        let id = nextID
        let deadline = timeout ?? configuration.commandTimeout
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HCIEvent, any Error>) in
                let clock = clock
                let timer = Task { [weak self] in
                    guard (try? await clock.sleep(for: deadline)) != nil else { return }
                    await self?.expire(id)
                }
                pendingCommands[id] = PendingCommand(command: command, continuation: continuation, timer: timer)
                waitingCommands.append(id)
                Task { await self.writeCommands() }
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
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

    private func expectSuccess(_ command: HCICommand) async throws(BLEError) {
        _ = try await complete(command)
    }

    private func writeCommands() async {
        guard !writingCommands else { return }
        writingCommands = true
        defer { writingCommands = false }
        while commandCredits > 0, failure == nil, let id = waitingCommands.first {
            waitingCommands.removeFirst()
            guard let pending = pendingCommands[id] else { continue }
            commandCredits -= 1
            sentCommands.append(id)
            await write(.command(pending.command))
        }
    }

    private func expire(_ id: Int) {
        guard let pending = pendingCommands.removeValue(forKey: id) else { return }
        let wasSent = sentCommands.contains(id)
        waitingCommands.removeAll { $0 == id }
        sentCommands.removeAll { $0 == id }
        // A controller that swallowed a command also swallowed its credit: take it back, or the
        // queue would stall forever behind a command nobody will answer.
        if wasSent { commandCredits = max(commandCredits, 1) }
        pending.continuation.resume(throwing: BLEError.commandTimedOut(pending.command.name))
        Task { await self.writeCommands() }
    }

    private func completeCommand(opcode: UInt16, credits: UInt8, with event: HCIEvent) {
        commandCredits = Int(credits)
        if opcode != 0, let index = sentCommands.firstIndex(where: { pendingCommands[$0]?.command.opcode == opcode }) {
            let id = sentCommands.remove(at: index)
            if let pending = pendingCommands.removeValue(forKey: id) {
                pending.timer?.cancel()
                pending.continuation.resume(returning: event)
            }
        }
        Task { await self.writeCommands() }
    }

    private func write(_ packet: HCIPacket) async {
        let bytes = packet.h4Bytes
        snoop?.record(bytes, sentByHost: true)
        do {
            try await stream.write(bytes)
        } catch {
            fail(.transport("\(error)"))
        }
    }

    // MARK: incoming

    private func receive(_ chunk: [UInt8]) async {
        let packets: [HCIPacket]
        do {
            packets = try framer.feed(chunk)
        } catch {
            fail(.protocolError("\(error)"))
            await stream.close()
            return
        }
        for packet in packets {
            snoop?.record(packet.h4Bytes, sentByHost: false)
            switch packet {
            case .event(let raw):
                guard let event = try? HCIEvent(parsing: raw) else {
                    otherIgnoredPackets += 1
                    continue
                }
                await handle(event)
            case .acl(let acl):
                await receiveACL(acl)
            case .command, .other:
                otherIgnoredPackets += 1
            }
        }
    }

    private func handle(_ event: HCIEvent) async {
        switch event {
        case .commandComplete(let credits, let opcode, _):
            completeCommand(opcode: opcode, credits: credits, with: event)
        case .commandStatus(_, let credits, let opcode):
            completeCommand(opcode: opcode, credits: credits, with: event)
        case .numberOfCompletedPackets(let entries):
            for entry in entries {
                let returned = min(Int(entry.count), inFlight[entry.handle] ?? 0)
                inFlight[entry.handle] = (inFlight[entry.handle] ?? 0) - returned
                aclCredits = min(aclCredits + returned, Int(aclBufferSize.count))
            }
            await writeACL()
        case .leAdvertisingReports(let reports):
            for report in reports { scanContinuation?.yield(report) }
        case .leConnectionComplete(let complete):
            if let waiter = connectWaiter {
                connectWaiter = nil
                waiter.continuation.resume(returning: complete)
            } else if complete.status == 0 {
                // A connection nobody asked for (e.g. one that completed after a cancel lost the race): drop it.
                Task { _ = try? await self.send(.disconnect(handle: complete.handle, reason: 0x13)) }
            }
        case .disconnectionComplete(let status, let handle, let reason):
            guard status == 0 else { return }
            linkClosed(handle: handle, reason: DisconnectReason(hciReason: reason))
        case .leRemoteConnectionParameterRequest(let handle, let minimum, let maximum, let latency, let timeout):
            Task {
                _ = try? await self.send(.leRemoteConnectionParameterRequestReply(
                    handle: handle, minInterval: minimum, maxInterval: maximum, latency: latency, timeout: timeout))
            }
        case .hardwareError(let code):
            fail(.transport("the controller reported hardware error 0x\(hex(code))"))
        case .leConnectionUpdateComplete, .leMeta, .other:
            break
        }
    }

    // MARK: scanning

    /// Advertising reports until the consumer stops; scanning is switched off when it does.
    public func scan(active: Bool = true) async throws(BLEError) -> AsyncThrowingStream<LEAdvertisingReport, any Error> {
        if let failure { throw failure }
        if scanContinuation != nil { await stopScanning() }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LEAdvertisingReport.self, bufferingPolicy: .bufferingNewest(256))
        try await expectSuccess(.leSetScanParameters(active: active, interval: 0x0060, window: 0x0030, ownAddressType: 0, filterPolicy: 0))
        try await expectSuccess(.leSetScanEnable(true, filterDuplicates: false))
        scanContinuation = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.scanEnded(continuation) }
        }
        return stream
    }

    private func scanEnded(_ continuation: AsyncThrowingStream<LEAdvertisingReport, any Error>.Continuation) async {
        // Only the scan this continuation belongs to may switch scanning off.
        guard failure == nil else { return }
        _ = try? await send(.leSetScanEnable(false, filterDuplicates: false))
    }

    private func stopScanning() async {
        guard let continuation = scanContinuation else { return }
        scanContinuation = nil
        continuation.finish()
        _ = try? await send(.leSetScanEnable(false, filterDuplicates: false))
    }

    // MARK: connecting

    /// Connects to an advertising peripheral, cancelling the attempt when the deadline passes.
    public func connect(to peer: BLEAddress, timeout: Duration? = nil) async throws(BLEError) -> BLEConnection {
        if let failure { throw failure }
        guard connectWaiter == nil else { throw .invalid("another connection attempt is in progress") }
        await stopScanning()
        events?(.connecting(peer))
        let command = HCICommand.leCreateConnection(peer: peer, scanInterval: 0x0060, scanWindow: 0x0060, ownAddressType: 0,
                                                    minInterval: 0x0018, maxInterval: 0x0028, latency: 0, supervisionTimeout: 0x01F4)
        switch try await send(command) {
        case .commandStatus(let status, _, _) where status != 0:
            throw .connectionFailed(peer, status: status)
        default:
            break
        }
        let deadline = timeout ?? configuration.connectTimeout
        let clock = clock
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: deadline)) != nil else { return }
            await self?.connectTimedOut()
        }
        defer { timer.cancel() }
        let complete: LEConnectionComplete
        do {
            complete = try await withCheckedThrowingContinuation { continuation in
                connectWaiter = (peer, continuation)
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
        if complete.status == 0x02 { throw .connectionTimedOut(peer) } // cancelled by our deadline
        guard complete.status == 0 else { throw .connectionFailed(peer, status: complete.status) }
        let connection = BLEConnection(host: self, handle: complete.handle, peer: complete.peer.kind == peer.kind ? complete.peer : peer,
                                       clock: clock, attTimeout: configuration.attTimeout, events: events)
        connections[complete.handle] = connection
        inFlight[complete.handle] = 0
        events?(.connected(connection.peer, link: complete.handle))
        return connection
    }

    private func connectTimedOut() async {
        guard connectWaiter != nil else { return }
        // The controller answers the cancel with a Connection Complete carrying status 0x02.
        if (try? await send(.leCreateConnectionCancel)) == nil, let waiter = connectWaiter {
            connectWaiter = nil
            waiter.continuation.resume(throwing: BLEError.connectionTimedOut(waiter.address))
        }
    }

    /// Asks the controller to end the link and waits (briefly) for it to say so.
    func disconnect(handle: UInt16, reason: UInt8 = 0x13) async {
        guard connections[handle] != nil else { return }
        closingLocally.insert(handle)
        _ = try? await send(.disconnect(handle: handle, reason: reason))
        let clock = clock
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            disconnectWaiters[handle, default: []].append(continuation)
            Task { [weak self] in
                try? await clock.sleep(for: .seconds(2))
                await self?.linkClosed(handle: handle, reason: .localHostTerminated)
            }
        }
    }

    private func linkClosed(handle: UInt16, reason: DisconnectReason) {
        let reason = closingLocally.remove(handle) != nil ? .localHostTerminated : reason
        if let connection = connections.removeValue(forKey: handle) {
            connection.linkClosed(reason)
            events?(.disconnected(link: handle, reason))
        }
        // Packets the controller had not confirmed for this link come back as credits.
        aclCredits = min(aclCredits + (inFlight.removeValue(forKey: handle) ?? 0), Int(aclBufferSize.count))
        aclQueues[handle] = nil
        aclOrder.removeAll { $0 == handle }
        reassembler.forget(handle: handle)
        wakeDisconnectWaiters(handle)
        Task { await self.writeACL() }
    }

    private func wakeDisconnectWaiters(_ handle: UInt16) {
        for waiter in disconnectWaiters.removeValue(forKey: handle) ?? [] { waiter.resume() }
    }

    // MARK: ACL

    /// Sends one L2CAP PDU on a link, cut into ACL fragments the controller's buffers can hold.
    func sendL2CAP(handle: UInt16, channel: UInt16, payload: [UInt8]) async throws(BLEError) {
        if let failure { throw failure }
        guard connections[handle] != nil else { throw .disconnected(.localHostTerminated) }
        let pdu = L2CAPFrame(channel: channel, payload: payload).encoded
        let size = max(Int(aclBufferSize.length), 1)
        var fragments: [ACLPacket] = []
        var offset = 0
        while offset < pdu.count {
            let end = min(offset + size, pdu.count)
            fragments.append(ACLPacket(handle: handle, boundary: offset == 0 ? .firstNonFlushable : .continuing, data: Array(pdu[offset..<end])))
            offset = end
        }
        if aclQueues[handle] == nil { aclOrder.append(handle) }
        aclQueues[handle, default: []].append(contentsOf: fragments)
        await writeACL()
    }

    /// Writes queued fragments while the controller has buffers, taking links in turn.
    private func writeACL() async {
        guard !writingACL else { return }
        writingACL = true
        defer { writingACL = false }
        while aclCredits > 0, failure == nil, let handle = aclOrder.first {
            aclOrder.removeFirst()
            guard var queue = aclQueues[handle], !queue.isEmpty else {
                aclQueues[handle] = nil
                continue
            }
            let fragment = queue.removeFirst()
            if queue.isEmpty { aclQueues[handle] = nil } else {
                aclQueues[handle] = queue
                aclOrder.append(handle)
            }
            aclCredits -= 1
            inFlight[handle, default: 0] += 1
            await write(.acl(fragment))
        }
    }

    private func receiveACL(_ packet: ACLPacket) async {
        guard let connection = connections[packet.handle] else {
            otherIgnoredPackets += 1
            return
        }
        guard let frame = reassembler.add(packet) else { return }
        await route(frame, on: connection)
    }

    private func route(_ frame: L2CAPFrame, on connection: BLEConnection) async {
        switch frame.channel {
        case L2CAPFrame.att:
            await connection.bearer.receive(frame.payload)
        case L2CAPFrame.leSignaling:
            await signaling(frame.payload, on: connection)
        case L2CAPFrame.securityManager:
            // We do not pair. A Pairing Request gets Pairing Failed: Pairing Not Supported.
            if frame.payload.first == 0x01 {
                try? await sendL2CAP(handle: connection.handle, channel: L2CAPFrame.securityManager, payload: [0x05, 0x05])
            }
        default:
            otherIgnoredPackets += 1
        }
    }

    private func signaling(_ payload: [UInt8], on connection: BLEConnection) async {
        guard let packet = try? LESignalingPacket(parsing: payload) else {
            // Not understood: reject with reason 0x0000 (Command not understood) and identifier 0 when unknown.
            let reject = LESignalingPacket.commandReject(identifier: payload.count > 1 ? payload[1] : 0, reason: 0, data: [])
            try? await sendL2CAP(handle: connection.handle, channel: L2CAPFrame.leSignaling, payload: reject.encoded)
            return
        }
        switch packet {
        case .connectionParameterUpdateRequest(let identifier, let minimum, let maximum, let latency, let timeout):
            let response = LESignalingPacket.connectionParameterUpdateResponse(identifier: identifier, result: 0)
            try? await sendL2CAP(handle: connection.handle, channel: L2CAPFrame.leSignaling, payload: response.encoded)
            let handle = connection.handle
            Task {
                _ = try? await self.send(.leConnectionUpdate(handle: handle, minInterval: minimum, maxInterval: maximum,
                                                             latency: latency, supervisionTimeout: timeout))
            }
        case .commandReject, .connectionParameterUpdateResponse:
            break
        case .other(_, let identifier, _):
            let reject = LESignalingPacket.commandReject(identifier: identifier, reason: 0, data: [])
            try? await sendL2CAP(handle: connection.handle, channel: L2CAPFrame.leSignaling, payload: reject.encoded)
        }
    }
}
