import BLEProtocol
import Transports

/// One recorded connection cut into exchanges: each request our host sent, with everything the
/// peripheral sent after it until our host's next request (its answer, notifications,
/// indications, its disconnect), each at its delay from the request. What the peripheral said
/// before our host's first request is the prelude, timed from the connection's start.
struct Conversation {
    enum Step: Hashable, Sendable {
        case pdu([UInt8])
        case disconnect(UInt8)
    }

    struct Exchange {
        var request: [UInt8]
        var steps: [(offset: Duration, step: Step)]
        var played = false
    }

    enum Match {
        case exact([(offset: Duration, step: Step)])
        case differentValue([(offset: Duration, step: Step)], recorded: [UInt8])
        case none
    }

    var prelude: [(offset: Duration, step: Step)] = []
    private(set) var exchanges: [Exchange] = []

    init(_ connection: BLECassette.Connection) {
        var started: Duration?
        for record in connection.att {
            guard let opcode = record.pdu.first else { continue }
            switch record.direction {
            case .toPeripheral:
                guard Self.isRequest(opcode) else { continue }
                exchanges.append(Exchange(request: record.pdu, steps: []))
                started = record.at
            case .fromPeripheral:
                add(.pdu(record.pdu), at: record.at, after: started)
            }
        }
        if let end = connection.end, !end.byHost { add(.disconnect(end.reason), at: end.at, after: started) }
    }

    private mutating func add(_ step: Step, at time: Duration, after started: Duration?) {
        if let started, !exchanges.isEmpty {
            exchanges[exchanges.count - 1].steps.append((max(.zero, time - started), step))
        } else {
            prelude.append((time, step))
        }
    }

    /// What our host sends that the peripheral answers or acts on: requests, and writes without
    /// response (plain or signed), which notifications may follow.
    static func isRequest(_ opcode: UInt8) -> Bool {
        ATTPDU.responseOpcode(forRequest: opcode) != nil || opcode == ATTPDU.Opcode.writeCommand || opcode == 0xD2
    }

    static func isWrite(_ opcode: UInt8) -> Bool {
        opcode == ATTPDU.Opcode.writeRequest || opcode == ATTPDU.Opcode.writeCommand || opcode == 0xD2
    }

    static func handle(of pdu: [UInt8]) -> UInt16 {
        pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
    }

    /// Every recorded request has been asked and answered: the recording has nothing more.
    var isFinished: Bool { exchanges.allSatisfy(\.played) }

    /// The requests the recorded device refused for want of security (0x05 Insufficient
    /// Authentication, 0x0F Insufficient Encryption, 0x0C Encryption Key Size Too Short) and
    /// answered later on the same connection: the error it gave each, by the request's bytes.
    var protectedRequests: [[UInt8]: UInt8] {
        var refused: [[UInt8]: UInt8] = [:]
        var protected: [[UInt8]: UInt8] = [:]
        for exchange in exchanges {
            if let code = Self.securityRefusal(exchange) {
                refused[exchange.request] = refused[exchange.request] ?? code
            } else if let code = refused[exchange.request] {
                protected[exchange.request] = code
            }
        }
        return protected
    }

    /// The security error an exchange's answer is, if it is one.
    static func securityRefusal(_ exchange: Exchange) -> UInt8? {
        guard case .pdu(let pdu)? = exchange.steps.first?.step, pdu.count == 5, pdu[0] == ATTPDU.Opcode.errorResponse,
              [0x05, 0x0F, 0x0C].contains(pdu[4]) else { return nil }
        return pdu[4]
    }

    /// A protected request on a link that now has the security it needs: its recorded refusals
    /// are passed over (a central that secured first is never refused), then it matches as usual.
    mutating func matchSecured(_ request: [UInt8]) -> Match {
        for index in exchanges.indices where !exchanges[index].played && exchanges[index].request == request
            && Self.securityRefusal(exchanges[index]) != nil {
            exchanges[index].played = true
        }
        if let index = exchanges.lastIndex(where: { $0.request == request && Self.securityRefusal($0) == nil }),
           !exchanges[...index].contains(where: { !$0.played && $0.request == request }) {
            // Asked again after its answers ran out: the last value, not a refusal.
            return .exact(exchanges[index].steps.filter { if case .pdu = $0.step { true } else { false } })
        }
        return match(request)
    }

    /// The exchange that answers `request`, marked played (see `ReplayPeripheral`).
    mutating func match(_ request: [UInt8]) -> Match {
        if let index = exchanges.firstIndex(where: { !$0.played && $0.request == request }) {
            exchanges[index].played = true
            return .exact(exchanges[index].steps)
        }
        if let opcode = request.first, Self.isWrite(opcode), request.count >= 3,
           let index = exchanges.firstIndex(where: { !$0.played && $0.request.count >= 3 && $0.request.first == opcode
                                                     && $0.request[1] == request[1] && $0.request[2] == request[2] }) {
            exchanges[index].played = true
            return .differentValue(exchanges[index].steps, recorded: Array(exchanges[index].request.dropFirst(3)))
        }
        // Asked again after the recording's answers ran out (a poll, a retry): the last answer again.
        if let index = exchanges.lastIndex(where: { $0.request == request }) {
            return .exact(exchanges[index].steps.filter { if case .pdu = $0.step { true } else { false } })
        }
        return .none
    }
}
