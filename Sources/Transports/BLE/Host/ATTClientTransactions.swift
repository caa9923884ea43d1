import BLEProtocol
import HAL

/// The client side of one ATT bearer's transactions (Core Vol 3 Part F §3.3.2), as a value:
/// one request outstanding at a time, the rest queued; each received PDU sorted into what it
/// is. Cancelling a caller never breaks the protocol: a request already sent stays outstanding
/// (the specification allows no second request before its response), its late response is
/// dropped, and the next queued request goes out then.
///
/// Sans-IO: fed submissions, received bytes, cancellations and the transaction timeout, it
/// returns the PDUs to send and the outcomes to hand back.
@_spi(Fuzzing) public struct ATTClientTransactions: Sendable {
    /// The ATT_MTU in force; received PDUs longer than it are dropped, as the spec requires.
    public private(set) var mtu: UInt16 = ATTMTU.minimum
    /// The MTU we offer and accept when the peer asks.
    public let preferredMTU: UInt16
    /// The request sent and not yet answered; `id` nil once its caller was cancelled (its late answer is dropped).
    public private(set) var outstanding: (id: Int?, request: ATTPDU)?
    private var queue: [(id: Int, request: ATTPDU)] = []
    /// Set when the bearer can no longer be used (transaction timeout, link gone).
    public private(set) var closed: BLEError?
    /// Received PDUs that failed to parse or answered nothing outstanding; counted, then dropped.
    public private(set) var malformed = 0
    /// Received PDUs longer than the MTU; counted, then dropped.
    public private(set) var oversized = 0
    /// Requests sent so far: a new value means a new request is outstanding.
    public private(set) var requestsSent = 0

    /// Callers waiting their turn beyond this are refused rather than queued.
    public static let maximumQueued = 64

    /// Starts at the minimum MTU; `preferredMTU` below 23 is raised to 23.
    public init(preferredMTU: UInt16 = ATTMTU.preferred) {
        self.preferredMTU = max(23, preferredMTU)
    }

    /// What a received PDU turned out to be.
    public enum Receipt: Equatable, Sendable {
        /// The answer to the request of `id` (an Error Response included).
        case response(id: Int, ATTPDU)
        /// The request of `id` got an answer that is not ATT.
        case failure(id: Int, BLEError)
        /// A value the peer pushed for `handle`; it needs no answer.
        case notification(handle: UInt16, value: [UInt8])
        /// Delivered like a notification; the confirmation is already among the PDUs to send.
        case indication(handle: UInt16, value: [UInt8])
        /// The peer exchanged MTUs on its own initiative; the new MTU is in force.
        case mtuChanged(UInt16)
        /// Nothing for anyone: a late answer to a cancelled request, a malformed or oversized PDU.
        case dropped
    }

    /// Queues `request` for `id`; returns the PDU to send now, if it may go at once.
    public mutating func submit(_ id: Int, _ request: ATTPDU) throws(BLEError) -> ATTPDU? {
        if let closed { throw closed }
        guard queue.count < Self.maximumQueued else { throw .invalid("too many ATT requests waiting on one link") }
        queue.append((id, request))
        return next()
    }

    /// The caller of `id` stopped waiting. Returns whether it was still pending.
    public mutating func cancel(_ id: Int) -> Bool {
        if let index = queue.firstIndex(where: { $0.id == id }) {
            queue.remove(at: index)
            return true
        }
        if outstanding?.id == id {
            outstanding?.id = nil
            return true
        }
        return false
    }

    /// One PDU from the peer. `send` gets what must go back (a confirmation, our MTU, an error
    /// for a request we cannot serve, the next queued request).
    public mutating func receive(_ bytes: [UInt8]) -> (receipt: Receipt, send: [ATTPDU]) {
        guard closed == nil else { return (.dropped, []) }
        guard bytes.count <= Int(mtu) else {
            oversized += 1
            // An answer to the outstanding request that breaks the MTU ends that request at once
            // (instead of leaving it to the 30 s timeout); anything else oversized is dropped.
            if let failed = endOutstanding(ifAnsweredBy: bytes.first,
                                           .attProtocolError("an ATT answer of \(bytes.count) bytes where the ATT_MTU allows \(mtu)")) {
                return failed
            }
            return (.dropped, [])
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(parsing: bytes)
        } catch {
            malformed += 1
            // A garbled answer to the outstanding request ends that request with a clear error.
            return endOutstanding(ifAnsweredBy: bytes.first, .attProtocolError("malformed ATT response: \(error)")) ?? (.dropped, [])
        }
        switch pdu {
        case .handleValueNotification(let handle, let value):
            return (.notification(handle: handle, value: value), [])
        case .handleValueIndication(let handle, let value):
            return (.indication(handle: handle, value: value), [.handleValueConfirmation])
        case .exchangeMTURequest(let theirs):
            mtu = max(23, min(preferredMTU, theirs))
            return (.mtuChanged(mtu), [.exchangeMTUResponse(preferredMTU)])
        default:
            if pdu.isRequest {
                // We serve no attributes: Attribute Not Found for lookups, Request Not Supported else.
                let code: UInt8 = [0x04, 0x06, 0x08, 0x10].contains(pdu.opcode) ? 0x0A : 0x06
                return (.dropped, [.errorResponse(requestOpcode: pdu.opcode, handle: 0, code: code)])
            }
            guard pdu.isResponse, let current = outstanding, Self.answers(pdu, current.request) else {
                malformed += 1
                return (.dropped, [])
            }
            outstanding = nil
            if case .exchangeMTURequest(let ours) = current.request, case .exchangeMTUResponse(let theirs) = pdu {
                mtu = max(23, min(ours, theirs))
            }
            let send = next().map { [$0] } ?? []
            guard let id = current.id else { return (.dropped, send) }
            return (.response(id: id, pdu), send)
        }
    }

    /// Ends the outstanding request with `error` when `opcode` is what would answer it (its
    /// response, or an Error Response); nil otherwise.
    private mutating func endOutstanding(ifAnsweredBy opcode: UInt8?, _ error: BLEError) -> (receipt: Receipt, send: [ATTPDU])? {
        guard let current = outstanding, let opcode,
              opcode == ATTPDU.Opcode.errorResponse || opcode == ATTPDU.responseOpcode(forRequest: current.request.opcode) else { return nil }
        outstanding = nil
        let send = next().map { [$0] } ?? []
        guard let id = current.id else { return (.dropped, send) }
        return (.failure(id: id, error), send)
    }

    /// The outstanding request got no answer within the transaction timeout: the bearer is done
    /// (Vol 3 Part F §3.3.3). Returns every id still waiting, to fail.
    public mutating func timedOut() -> [Int] {
        close(.attTimedOut(outstanding.map { Self.describe($0.request) } ?? "a request"))
    }

    /// Ends the bearer with `error`; returns every id still waiting.
    public mutating func close(_ error: BLEError) -> [Int] {
        guard closed == nil else { return [] }
        closed = error
        let ids = [outstanding?.id].compactMap { $0 } + queue.map(\.id)
        outstanding = nil
        queue = []
        return ids
    }

    private mutating func next() -> ATTPDU? {
        guard outstanding == nil, closed == nil, !queue.isEmpty else { return nil }
        let next = queue.removeFirst()
        outstanding = (next.id, next.request)
        requestsSent += 1
        return next.request
    }

    private static func answers(_ response: ATTPDU, _ request: ATTPDU) -> Bool {
        if case .errorResponse(let requestOpcode, _, _) = response { return requestOpcode == request.opcode }
        return ATTPDU.responseOpcode(forRequest: request.opcode) == response.opcode
    }

    /// How a request is named in errors and timeouts, e.g. "Read of handle 0x002A".
    public static func describe(_ pdu: ATTPDU) -> String {
        switch pdu {
        case .exchangeMTURequest: "Exchange MTU"
        case .readRequest(let handle): "Read of handle 0x\(Hex.word(handle))"
        case .readBlobRequest(let handle, _): "Read Blob of handle 0x\(Hex.word(handle))"
        case .writeRequest(let handle, _): "Write of handle 0x\(Hex.word(handle))"
        case .readByGroupTypeRequest: "service discovery"
        case .readByTypeRequest: "characteristic discovery"
        case .findInformationRequest: "descriptor discovery"
        case .findByTypeValueRequest: "service discovery by UUID"
        default: "ATT request 0x\(Hex.byte(pdu.opcode))"
        }
    }
}
