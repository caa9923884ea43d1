@_spi(Fuzzing) import BLEProtocol
import FuzzSupport
import Glibc
import HAL
@_spi(Fuzzing) import Transports

/// The host core as a state machine: the command credit queue, the ACL scheduler, one link's
/// ATT transactions and the connection-parameter rules, driven by a script of operations the
/// fuzzer writes — a controller granting and withholding credits, completing packets for links
/// that exist or not, links closing, a peer answering, repeating, flooding and falling silent,
/// callers cancelling at any moment. After every step the invariants must hold:
/// - credits never above what the controller granted (commands) or its buffers (ACL), and
///   every ACL buffer accounted for (free + in flight = what the controller has);
/// - no answer ever reaches a caller that cancelled, no caller is answered twice, at most one
///   ATT request outstanding, a closed bearer answers nobody;
/// - every queue stays inside its bound (memory is bounded by construction, and the run's
///   -rss_limit_mb catches what is not).
///
/// Input: one operation byte, then that operation's operands, repeated.
runFuzzer { bytes in
    var input = FuzzInput(Array(bytes.prefix(4096)))
    var flow = HCICommandFlow()
    var nextCommand = 0
    var waitingCommands: Set<Int> = []
    var abandonedCommands: Set<Int> = []
    var sentOpcodes: [UInt16] = []

    let bufferCount = Int(input.byte() % 8) + 1
    let fragment = Int(input.byte() % 64) + 1
    var acl = ACLScheduler(fragmentLength: fragment, bufferCount: bufferCount)
    var linksOpen: Set<UInt16> = []

    var att = ATTClientTransactions(preferredMTU: UInt16(input.byte()) + 23)
    var nextRequest = 0
    var waitingRequests: Set<Int> = []
    var cancelledRequests: Set<Int> = []
    var answeredRequests: Set<Int> = []

    func check(_ condition: Bool, _ what: @autoclosure () -> String) {
        // Said on stderr first: a release build's precondition keeps no message.
        if !condition {
            let words = Array("host invariant broken: \(what())\n".utf8)
            _ = words.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            abort()
        }
    }

    while !input.isAtEnd {
        switch input.byte() % 14 {
        case 0: // a command from a caller
            nextCommand += 1
            let opcode = [0x0C03, 0x1001, 0x200C, 0x200D, 0x0406, 0x2013][Int(input.byte() % 6)] as UInt16
            if let sent = try? flow.submit(nextCommand, HCICommand(opcode: opcode)) {
                waitingCommands.insert(nextCommand)
                sentOpcodes += sent.map(\.opcode)
            }
        case 1: // a detached command
            if let sent = try? flow.submit(nil, HCICommand(opcode: 0x2021)) { sentOpcodes += sent.map(\.opcode) }
        case 2: // the controller answers (an opcode it was sent, or any)
            let opcode = input.byte() % 2 == 0 && !sentOpcodes.isEmpty ? sentOpcodes[Int(input.byte()) % sentOpcodes.count] : input.u16()
            let (id, sent) = flow.answered(opcode: opcode, credits: input.byte() % 5)
            sentOpcodes += sent.map(\.opcode)
            if let id {
                check(!abandonedCommands.contains(id), "an abandoned command's answer reached its caller")
                check(waitingCommands.remove(id) != nil, "a command answered twice or never asked")
            }
        case 3: // a caller cancels
            let id = Int(input.byte()) % (nextCommand + 1)
            if flow.abandon(id) {
                check(waitingCommands.remove(id) != nil, "abandoned a command nobody waited for")
                abandonedCommands.insert(id)
            }
        case 4: // a command's deadline
            let id = Int(input.byte()) % (nextCommand + 1)
            let (pending, sent) = flow.expire(id)
            sentOpcodes += sent.map(\.opcode)
            if pending { waitingCommands.remove(id) }
        case 5: // a link opens
            let handle = UInt16(input.byte() % 4)
            acl.open(handle)
            linksOpen.insert(handle)
        case 6: // a PDU to send on a link
            let handle = UInt16(input.byte() % 4)
            let length = Int(input.u16() % 2048)
            _ = try? acl.enqueue(handle, pdu: [UInt8](repeating: 0x55, count: length))
        case 7: // Number Of Completed Packets, for any handle and any count
            _ = acl.completed(UInt16(input.byte() % 6), count: Int(input.u16()))
        case 8: // a link closes
            let handle = UInt16(input.byte() % 4)
            _ = acl.close(handle)
            linksOpen.remove(handle)
        case 9: // an ATT request
            nextRequest += 1
            let handle = input.u16()
            let request: ATTPDU = input.byte() % 2 == 0 ? .readRequest(handle: handle) : .writeRequest(handle: handle, value: input.chunk())
            // submit returns the PDU to send now, or nil when the request waits its turn: both are a caller waiting.
            do {
                _ = try att.submit(nextRequest, request)
                waitingRequests.insert(nextRequest)
            } catch {}
        case 10: // a PDU from the peer
            let (receipt, _) = att.receive(input.chunk())
            switch receipt {
            case .response(let id, _), .failure(let id, _):
                check(!cancelledRequests.contains(id), "a cancelled request's answer reached its caller")
                check(answeredRequests.insert(id).inserted, "a request answered twice")
                check(waitingRequests.remove(id) != nil, "an answer for a request never made")
            case .notification(_, let value), .indication(_, let value):
                check(value.count <= Int(att.mtu) - 3, "a value longer than the MTU allows was delivered")
            default:
                break
            }
        case 11: // a caller cancels its request
            let id = Int(input.byte()) % (nextRequest + 1)
            if att.cancel(id) {
                cancelledRequests.insert(id)
                waitingRequests.remove(id)
            }
        case 12: // the transaction timeout, or the link going
            for id in input.byte() % 2 == 0 ? att.timedOut() : att.close(.disconnected(.supervisionTimeout)) {
                check(waitingRequests.remove(id) != nil, "closing failed a request nobody waited for")
            }
        default: // parameters a peripheral asks for
            let asked = ConnectionParameters(minInterval: input.u16(), maxInterval: input.u16(), latency: input.u16(), supervisionTimeout: input.u16())
            if asked.problem == nil {
                check(ConnectionParameters.intervalRange.contains(asked.minInterval) && asked.minInterval <= asked.maxInterval
                      && ConnectionParameters.latencyRange.contains(asked.latency)
                      && Int(asked.supervisionTimeout) * 40 > (1 + Int(asked.latency)) * Int(asked.maxInterval) * 10,
                      "accepted parameters outside the specification's ranges")
            }
        }
        // Invariants after every step.
        check(flow.credits <= max(flow.mostGranted, 1), "command credits above what the controller granted")
        check(flow.waitingCount <= HCICommandFlow.maximumWaiting, "the command queue outgrew its bound")
        check(acl.credits >= 0 && acl.credits <= bufferCount, "ACL credits outside 0…buffers")
        check(acl.credits + acl.inFlight.values.reduce(0, +) == bufferCount, "an ACL buffer lost or made up")
        check(att.closed == nil || att.outstanding == nil, "a closed bearer with a request outstanding")
        if att.closed != nil { check(waitingRequests.isEmpty, "a closed bearer left callers waiting") }
        if sentOpcodes.count > 10_000 { sentOpcodes.removeFirst(5_000) }
    }
}
