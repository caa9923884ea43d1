@_spi(Fuzzing) import BLEProtocol
import FuzzSupport
import HAL
import HALFakes
import Synchronization
@_spi(Fuzzing) import Transports

/// GATT discovery and long reads against a peer whose answers are the fuzzer's: each request
/// gets the next scripted answer, and once the script is used up the peer repeats its last
/// answer, as a stubborn or broken peripheral would. The client must finish (successfully or
/// with an error) without asking such a peer forever.
///
/// Input: a byte choosing what the client does, then the answers, each a chunk (length byte, PDU).
/// Every request but a handful after the script ends uses up an answer, so a client asking more
/// than `requestLimit` times is asking forever.
let requestLimit = 10_000

final class ScriptedPeer: Sendable {
    private struct State {
        var answers: [[UInt8]]
        var next = 0
        var requests = 0
    }
    private let state: Mutex<State>
    let bearer = Mutex<ATTBearer?>(nil)

    init(answers: [[UInt8]]) { state = Mutex(State(answers: answers)) }

    var requests: Int { state.withLock { $0.requests } }

    /// What the peer sends back for one PDU from the client (nothing for a non-request).
    func answer(_ pdu: [UInt8]) -> [[UInt8]] {
        guard let opcode = pdu.first, let expected = ATTPDU.responseOpcode(forRequest: opcode) else { return [] }
        return state.withLock { state -> [[UInt8]] in
            state.requests += 1
            precondition(state.requests <= requestLimit, "the client made \(requestLimit) requests to a peer that repeats itself")
            guard !state.answers.isEmpty else { return [[0x01, opcode, 0x00, 0x00, 0x0A]] }
            let answer = state.answers[min(state.next, state.answers.count - 1)]
            state.next += 1
            // An answer that does not end the request would leave it to the 30-second ATT
            // timeout; a real peer's silence ends that way, so end it at once with an error.
            return Self.ends(answer, request: opcode, expected: expected)
                ? [answer] : [answer, [0x01, opcode, 0x00, 0x00, 0x0E]]
        }
    }

    /// Whether the bearer takes `answer` as the end of the request: a response with the right
    /// opcode (well-formed or not), or an Error Response about this request or malformed.
    private static func ends(_ answer: [UInt8], request: UInt8, expected: UInt8) -> Bool {
        guard let opcode = answer.first else { return false }
        if opcode == expected { return true }
        guard opcode == ATTPDU.Opcode.errorResponse else { return false }
        return answer.count != 5 || answer[1] == request
    }
}

// The bearer's request timers and pump are tasks of their own that finish on other threads just
// after the client returns, so LeakSanitizer would catch them in flight and call that a leak.
// Memory that really piles up still ends the run at -rss_limit_mb.
runFuzzer(flags: ["-detect_leaks=0"]) { bytes in
    var input = FuzzInput(Array(bytes.prefix(2048)))
    let mode = input.byte() % 3
    var answers: [[UInt8]] = []
    while !input.isAtEnd { answers.append(input.chunk()) }
    let peer = ScriptedPeer(answers: answers)
    let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { pdu throws(BLEError) in
        guard let bearer = peer.bearer.withLock({ $0 }) else { return }
        for answer in peer.answer(pdu) { bearer.receive(answer) }
    }
    peer.bearer.withLock { $0 = bearer }
    let gatt = GATTClient(bearer: bearer)
    runBlocking {
        switch mode {
        case 0:
            _ = try? await gatt.discoverAll()
        case 1:
            guard let services = try? await gatt.primaryServices(uuid: BluetoothUUID(0x181D)) else { return }
            for service in services {
                guard (try? await gatt.characteristics(of: service)) != nil else { return }
            }
        default:
            _ = try? await bearer.exchangeMTU(247)
            _ = try? await gatt.read(0x0003)
        }
    }
    peer.bearer.withLock { $0 = nil }
}
