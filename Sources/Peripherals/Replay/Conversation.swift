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
