import BLEProtocol
import HAL
import Synchronization
@testable import Transports

/// A controller played by the test, byte for byte: it answers the host's init commands (and any
/// command the test does not hold back) with Command Complete, records everything the host
/// writes, and sends whatever events and ACL data the test injects. In-process and instant, so
/// host tests run on a manual clock with no Python peer.
final class ScriptedController: HCIByteStream, Sendable {
    let description = "scripted controller"

    private struct State {
        var framer = H4Framer()
        var commands: [HCICommand] = []
        var acl: [ACLPacket] = []
        var held: Set<UInt16> = []
        var silent = false
        var waiters: [(id: Int, condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
        var closed = false
    }

    private let state = Mutex(State())
    private let stream: AsyncThrowingStream<[UInt8], any Error>
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    /// Command credits handed back with each answer.
    let credits: UInt8
    /// LE_Read_Buffer_Size: what the host may put in one ACL packet, and how many at once.
    let aclLength: UInt16
    let aclCount: UInt8

    init(credits: UInt8 = 1, aclLength: UInt16 = 27, aclCount: UInt8 = 4) {
        self.credits = credits
        self.aclLength = aclLength
        self.aclCount = aclCount
        (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
    }

    // MARK: HCIByteStream

    func write(_ bytes: [UInt8]) async throws(HCILinkError) {
        let (packets, answer) = state.withLock { s -> ([HCIPacket], [HCICommand]) in
            guard !s.closed else { return ([], []) }
            let packets = (try? s.framer.feed(bytes)) ?? []
            var answer: [HCICommand] = []
            for packet in packets {
                switch packet {
                case .command(let command):
                    s.commands.append(command)
                    if !s.silent, !s.held.contains(command.opcode) { answer.append(command) }
                case .acl(let acl):
                    s.acl.append(acl)
                default:
                    break
                }
            }
            return (packets, answer)
        }
        _ = packets
        for command in answer { inject(commandComplete(for: command)) }
        wakeWaiters()
    }

    func incoming() -> AsyncThrowingStream<[UInt8], any Error> { stream }

    func close() async {
        state.withLock { $0.closed = true }
        continuation.finish()
    }

    // MARK: what the test does

    /// Commands with this opcode are recorded but not answered (the test answers, or never).
    func hold(_ opcode: UInt16) { state.withLock { _ = $0.held.insert(opcode) } }
    func release(_ opcode: UInt16) { state.withLock { _ = $0.held.remove(opcode) } }
    /// Answer nothing at all from now on.
    func goSilent() { state.withLock { $0.silent = true } }

    var commands: [HCICommand] { state.withLock { $0.commands } }
    var aclPackets: [ACLPacket] { state.withLock { $0.acl } }

    func inject(_ bytes: [UInt8]) { continuation.yield(bytes) }

    /// Waits (without a clock) until `condition` holds for what the host has written.
    func waitUntil(_ condition: @escaping @Sendable (_ commands: [HCICommand], _ acl: [ACLPacket]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                if condition(s.commands, s.acl) { return true }
                s.nextWaiter += 1
                s.waiters.append((s.nextWaiter, { condition($0.commands, $0.acl) }, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    func waitForCommand(_ opcode: UInt16, count: Int = 1) async {
        await waitUntil { commands, _ in commands.filter { $0.opcode == opcode }.count >= count }
    }

    private func wakeWaiters() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            let snapshot = s
            let (met, unmet) = (s.waiters.filter { $0.condition(snapshot) }, s.waiters.filter { !$0.condition(snapshot) })
            s.waiters = unmet
            return met.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    // MARK: packets

    func commandComplete(for command: HCICommand, status: UInt8 = 0) -> [UInt8] {
        var parameters: [UInt8] = [status]
        switch command.opcode {
        case 0x2002: parameters += [UInt8(aclLength & 0xFF), UInt8(aclLength >> 8), aclCount]  // LE Read Buffer Size
        case 0x1009: parameters += [0x01, 0x00, 0x00, 0xA0, 0xA0, 0xA0]                        // Read BD_ADDR
        case 0x1005: parameters += [0, 0, 0, 0, 0, 0, 0]                                         // Read Buffer Size: none apart
        default: break
        }
        return Self.event(0x0E, [credits] + LittleEndian.u16(command.opcode) + parameters)
    }

    static func event(_ code: UInt8, _ parameters: [UInt8]) -> [UInt8] {
        [0x04, code, UInt8(parameters.count)] + parameters
    }

    static func commandStatus(_ opcode: UInt16, status: UInt8 = 0, credits: UInt8 = 1) -> [UInt8] {
        event(0x0F, [status, credits] + LittleEndian.u16(opcode))
    }

    static func connectionComplete(handle: UInt16, peer: BLEAddress, status: UInt8 = 0, interval: UInt16 = 0x0018,
                                   latency: UInt16 = 0, timeout: UInt16 = 0x01F4) -> [UInt8] {
        event(0x3E, [0x01, status] + LittleEndian.u16(handle) + [0x00, peer.kind == .random ? 1 : 0] + peer.littleEndianBytes
              + LittleEndian.u16(interval) + LittleEndian.u16(latency) + LittleEndian.u16(timeout) + [0x00])
    }

    static func disconnectionComplete(handle: UInt16, reason: UInt8) -> [UInt8] {
        event(0x05, [0x00] + LittleEndian.u16(handle) + [reason])
    }

    static func completedPackets(_ entries: [(handle: UInt16, count: UInt16)]) -> [UInt8] {
        event(0x13, [UInt8(entries.count)] + entries.flatMap { LittleEndian.u16($0.handle) + LittleEndian.u16($0.count) })
    }

    static func advertisingReport(_ address: BLEAddress, data: [UInt8], rssi: Int8 = -50, type: UInt8 = 0x00) -> [UInt8] {
        event(0x3E, [0x02, 0x01, type, address.kind == .random ? 1 : 0] + address.littleEndianBytes
              + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)])
    }

    static func remoteParameterRequest(handle: UInt16, min: UInt16, max: UInt16, latency: UInt16, timeout: UInt16) -> [UInt8] {
        event(0x3E, [0x06] + LittleEndian.u16(handle) + [min, max, latency, timeout].flatMap(LittleEndian.u16))
    }

    /// One L2CAP PDU on `channel` as a single ACL packet.
    static func l2cap(handle: UInt16, channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let pdu = LittleEndian.u16(UInt16(payload.count)) + LittleEndian.u16(channel) + payload
        return [0x02] + LittleEndian.u16(handle | 0x2000) + LittleEndian.u16(UInt16(pdu.count)) + pdu
    }

    static func att(handle: UInt16, _ pdu: [UInt8]) -> [UInt8] { l2cap(handle: handle, channel: 0x0004, pdu) }
}

/// The L2CAP payloads the host sent on `channel` of `handle` (single-fragment PDUs).
func l2capPayloads(_ packets: [ACLPacket], handle: UInt16, channel: UInt16) -> [[UInt8]] {
    packets.filter { $0.handle == handle }.compactMap { packet in
        guard packet.data.count >= 4 else { return nil }
        let cid = UInt16(packet.data[2]) | UInt16(packet.data[3]) << 8
        return cid == channel ? Array(packet.data[4...]) : nil
    }
}
