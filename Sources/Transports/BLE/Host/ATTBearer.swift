import HAL

/// The ATT bearer of one link, client side: one request outstanding at a time, each with the
/// 30-second transaction timeout; notifications and indications (confirmed) go to subscribers.
/// After a transaction timeout the bearer is dead, as the ATT specification requires.
public actor ATTBearer {
    public private(set) var mtu: UInt16 = 23
    private let clock: any Clock<Duration>
    private let timeout: Duration
    private let send: @Sendable ([UInt8]) async throws(BLEError) -> Void
    /// The connection handle this bearer runs on, named in the events it reports.
    private let link: UInt16
    private let events: HostEventHandler?

    private struct Outstanding {
        var request: ATTPDU
        var continuation: CheckedContinuation<ATTPDU, any Error>
        var timer: Task<Void, Never>
    }
    private var outstanding: Outstanding?
    private var queue: [(request: ATTPDU, continuation: CheckedContinuation<ATTPDU, any Error>)] = []
    private var closed: BLEError?
    private var subscribers: [UInt16: [AsyncStream<[UInt8]>.Continuation]] = [:]
    private var everything: [AsyncStream<ATTNotification>.Continuation] = []

    /// Counters for tests and benchmarks.
    public private(set) var notificationsReceived = 0
    public private(set) var malformedPDUs = 0

    /// `send` carries a PDU to the peer; `events` hears about the MTU, subscriptions and Error
    /// Responses on `link`. Public only as SPI: the fuzz targets stand in for the peer
    /// (`@_spi(Fuzzing) import Transports`); everything else gets its bearer from a link.
    @_spi(Fuzzing) public init(clock: any Clock<Duration>, timeout: Duration, link: UInt16 = 0, events: HostEventHandler? = nil,
                               send: @escaping @Sendable ([UInt8]) async throws(BLEError) -> Void) {
        self.clock = clock
        self.timeout = timeout
        self.link = link
        self.events = events
        self.send = send
    }

    /// Sends a request and returns its response; an Error Response throws `.att`.
    public func request(_ pdu: ATTPDU) async throws(BLEError) -> ATTPDU {
        if let closed { throw closed }
        let response: ATTPDU
        do {
            response = try await withCheckedThrowingContinuation { continuation in
                queue.append((pdu, continuation))
                Task { await self.pump() }
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
        if case .errorResponse(let opcode, let handle, let code) = response {
            let failure = ATTFailure(code: code, handle: handle, requestOpcode: opcode)
            events?(.attError(link: link, failure))
            throw .att(failure)
        }
        return response
    }

    /// A PDU that expects no answer (Write Command).
    public func command(_ pdu: ATTPDU) async throws(BLEError) {
        if let closed { throw closed }
        try await send(pdu.encoded)
    }

    public func exchangeMTU(_ ours: UInt16) async throws(BLEError) -> UInt16 {
        guard case .exchangeMTUResponse(let theirs) = try await request(.exchangeMTURequest(ours)) else {
            throw .protocolError("the answer to Exchange MTU was not an Exchange MTU Response")
        }
        mtu = max(23, min(ours, theirs))
        events?(.mtuExchanged(link: link, mtu: mtu))
        return mtu
    }

    /// The GATT client tells the bearer's listener that a CCCD write turned values on.
    func reportSubscribed(_ characteristic: GATTCharacteristic, indications: Bool) {
        events?(.subscribed(link: link, characteristic: characteristic.uuid, valueHandle: characteristic.valueHandle,
                            indications: indications))
    }

    /// Values the peer notifies or indicates on this handle.
    public func values(of handle: UInt16) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        if closed != nil {
            continuation.finish()
        } else {
            subscribers[handle, default: []].append(continuation)
        }
        return stream
    }

    private func pump() async {
        guard outstanding == nil, closed == nil, !queue.isEmpty else { return }
        let next = queue.removeFirst()
        let clock = clock
        let timeout = timeout
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            await self?.transactionTimedOut()
        }
        outstanding = Outstanding(request: next.request, continuation: next.continuation, timer: timer)
        do {
            try await send(next.request.encoded)
        } catch {
            finishOutstanding(.failure(error))
        }
    }

    private func finishOutstanding(_ result: Result<ATTPDU, BLEError>) {
        guard let current = outstanding else { return }
        outstanding = nil
        current.timer.cancel()
        current.continuation.resume(with: result.mapError { $0 as any Error })
        Task { await self.pump() }
    }

    private func transactionTimedOut() {
        guard let current = outstanding else { return }
        close(.attTimedOut(describe(current.request)))
    }

    /// A PDU from the peer.
    @_spi(Fuzzing) public func receive(_ bytes: [UInt8]) async {
        guard closed == nil else { return }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(parsing: bytes)
        } catch {
            malformedPDUs += 1
            // A garbled answer to our request ends that request with a clear error; anything else is dropped.
            if let current = outstanding, let opcode = bytes.first,
               opcode == 0x01 || opcode == ATTPDU.responseOpcode(forRequest: current.request.opcode) {
                finishOutstanding(.failure(.protocolError("malformed ATT response: \(error)")))
            }
            return
        }
        switch pdu {
        case .handleValueNotification(let handle, let value):
            notificationsReceived += 1
            deliver(value, to: handle)
        case .handleValueIndication(let handle, let value):
            notificationsReceived += 1
            deliver(value, to: handle)
            try? await send(ATTPDU.handleValueConfirmation.encoded)
        case .exchangeMTURequest(let theirs):
            // The peer asks too: answer with ours, and both sides use the smaller.
            mtu = max(23, min(247, theirs))
            events?(.mtuExchanged(link: link, mtu: mtu))
            try? await send(ATTPDU.exchangeMTUResponse(247).encoded)
        default:
            if pdu.isRequest {
                // We serve no attributes.
                let code: UInt8 = [0x04, 0x06, 0x08, 0x10].contains(pdu.opcode) ? 0x0A : 0x06
                try? await send(ATTPDU.errorResponse(requestOpcode: pdu.opcode, handle: 0, code: code).encoded)
            } else if pdu.isResponse, let current = outstanding {
                if case .errorResponse(let requestOpcode, _, _) = pdu, requestOpcode != current.request.opcode {
                    malformedPDUs += 1
                    return
                }
                if case .errorResponse = pdu {} else if ATTPDU.responseOpcode(forRequest: current.request.opcode) != pdu.opcode {
                    malformedPDUs += 1
                    return
                }
                finishOutstanding(.success(pdu))
            } else {
                malformedPDUs += 1
            }
        }
    }

    /// Every notification and indication of the link, whatever its handle, in the order they came:
    /// for drivers whose characteristics tell one story together.
    public func notifications() -> AsyncStream<ATTNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: ATTNotification.self, bufferingPolicy: .bufferingNewest(1024))
        if closed != nil { continuation.finish() } else { everything.append(continuation) }
        return stream
    }

    private func deliver(_ value: [UInt8], to handle: UInt16) {
        for subscriber in subscribers[handle] ?? [] { subscriber.yield(value) }
        for subscriber in everything { subscriber.yield(ATTNotification(handle: handle, value: value)) }
    }

    /// Fails everything outstanding and every later request with `error`.
    func close(_ error: BLEError) {
        guard closed == nil else { return }
        closed = error
        if let current = outstanding {
            outstanding = nil
            current.timer.cancel()
            current.continuation.resume(throwing: error)
        }
        for waiting in queue { waiting.continuation.resume(throwing: error) }
        queue = []
        for list in subscribers.values { for subscriber in list { subscriber.finish() } }
        subscribers = [:]
        for subscriber in everything { subscriber.finish() }
        everything = []
    }

    private func describe(_ pdu: ATTPDU) -> String {
        switch pdu {
        case .exchangeMTURequest: "Exchange MTU"
        case .readRequest(let handle): "Read of handle 0x\(hex16(handle))"
        case .readBlobRequest(let handle, _): "Read Blob of handle 0x\(hex16(handle))"
        case .writeRequest(let handle, _): "Write of handle 0x\(hex16(handle))"
        case .readByGroupTypeRequest: "service discovery"
        case .readByTypeRequest: "characteristic discovery"
        case .findInformationRequest: "descriptor discovery"
        case .findByTypeValueRequest: "service discovery by UUID"
        default: "ATT request 0x\(hex(pdu.opcode))"
        }
    }
}

/// A value the peer pushed, with the handle it belongs to.
public struct ATTNotification: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]
}
