import BLEProtocol
import HAL
import HALFakes
import Synchronization
import Testing
@_spi(Fuzzing) @testable import Transports

/// Inputs the `gatt` fuzz target found (Fuzz/Targets/gatt): a peripheral whose discovery answers
/// name handles outside the range asked for. Each input is the fuzz target's own format: a mode
/// byte (0: discover everything), then the peer's answers, each a length byte and an ATT PDU; the
/// peer repeats its last answer once the script is used up, as the fuzz target's peer does.
@Suite struct GATTHostileAnswerTests {
    /// One service 0x0005–0x0010, then "no more services", then a characteristic declared at
    /// handle 0x0001, before the range asked for: the client used to go back to handle 0x0002
    /// and ask again, forever, collecting the same characteristic without end.
    static let characteristicBeforeTheRange = PacketBytes.hex("00 08 1106050010000D18 05 011011000A 09 090701000203009D2A")

    /// One service 0x0000–0x0010, then characteristics declared at 0x0002, 0x0000 and 0x0010:
    /// the descriptor range of the first one ended at "0x0000 − 1", an arithmetic overflow trap.
    static let characteristicDeclaredAtHandleZero = PacketBytes.hex(
        "00 08 1106000010000D18 05 011011000A 17 0907 0200020300 9D2A 0000020100 9E2A 1000021100 9F2A")

    /// Found by the gatt fuzz target after the bearer learned to drop PDUs longer than the MTU:
    /// a 33-byte "Error Response" at MTU 23 was dropped and discovery waited for an answer that
    /// would never come (on a real link, 30 s). An oversized answer now ends the request at once.
    static let oversizedAnswer = PacketBytes.hex("""
        0008 1106 0500 1000 0d18 2101 0001 1000 0a09 0000 0811 0605 0010 000d 1805 0110 079d 1100 0a09 0907 2a03 2e00
        9d2a 0002 0300 9d2a
        """)

    @Test func anAnswerLongerThanTheMTUEndsTheRequestAtOnce() async throws {
        let peer = ScriptedGATTPeer(input: Self.oversizedAnswer)
        await #expect(throws: BLEError.attProtocolError("an ATT answer of 33 bytes where the ATT_MTU allows 23")) {
            try await peer.client.discoverAll()
        }
    }

    @Test func aCharacteristicBeforeTheRangeAskedForEndsDiscoveryWithAnError() async throws {
        let peer = ScriptedGATTPeer(input: Self.characteristicBeforeTheRange)
        await #expect(throws: BLEError.attProtocolError("characteristic discovery got handle 0x0001 where only "
                                                     + "0x0005–0x0010 could come next (handles must rise inside the range asked for)")) {
            try await peer.client.discoverAll()
        }
        #expect(peer.requests <= 3)
    }

    @Test func aCharacteristicAtHandleZeroEndsDiscoveryWithAnErrorNotATrap() async throws {
        let peer = ScriptedGATTPeer(input: Self.characteristicDeclaredAtHandleZero)
        // A service starting at handle 0 (no attribute has handle 0) is refused before its
        // characteristics are asked for.
        await #expect(throws: BLEError.attProtocolError("service discovery got the group 0x0000–0x0010 where only groups from 0x0001 "
                                                     + "could come next (services must follow one another without overlapping)")) {
            try await peer.client.discoverAll()
        }
    }
}

/// A peripheral that answers every request with the next scripted PDU, then repeats the last.
final class ScriptedGATTPeer: Sendable {
    private struct State {
        var answers: [[UInt8]]
        var next = 0
        var requests = 0
        var bearer: ATTBearer?
    }
    private final class Script: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }
    private let script: Script
    let client: GATTClient

    /// `input` in the gatt fuzz target's format (the mode byte is skipped).
    init(input: [UInt8]) {
        var answers: [[UInt8]] = []
        var offset = 1
        while offset < input.count {
            let length = Int(input[offset])
            answers.append(Array(input[(offset + 1)..<min(offset + 1 + length, input.count)]))
            offset += 1 + length
        }
        let script = Script(State(answers: answers))
        self.script = script
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { pdu throws(BLEError) in
            guard let opcode = pdu.first, ATTPDU.responseOpcode(forRequest: opcode) != nil else { return }
            let (bearer, answer) = script.state.withLock { state -> (ATTBearer?, [UInt8]) in
                state.requests += 1
                defer { state.next += 1 }
                return (state.bearer, state.answers[min(state.next, state.answers.count - 1)])
            }
            bearer?.receive(answer)
        }
        script.state.withLock { $0.bearer = bearer }
        client = GATTClient(bearer: bearer)
    }

    var requests: Int { script.state.withLock { $0.requests } }

    deinit { script.state.withLock { $0.bearer = nil } }
}
