@_spi(Fuzzing) import BLEProtocol
import Testing

/// The ACL scheduler's queues taken from the front in place (issue 28: a served stream queues
/// thousands of notifications on one link): order kept per link, turns taken across links,
/// credits never above the controller's buffers, bytes accounted, a closed link's queue gone.
@Suite struct ACLSchedulerQueueTests {
    static func pdu(_ n: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8)] + [UInt8](repeating: 0, count: 25) }

    @Test func aLongQueueDrainsInOrderAsCreditsComeBack() throws {
        var scheduler = ACLScheduler(fragmentLength: 27, bufferCount: 4)
        scheduler.open(0x40)
        scheduler.open(0x41)
        var sent: [ACLPacket] = []
        for n in 0..<2000 { sent += try scheduler.enqueue(0x40, pdu: Self.pdu(n)) }
        for n in 0..<10 { sent += try scheduler.enqueue(0x41, pdu: Self.pdu(10_000 + n)) }
        #expect(sent.count == 4)
        while sent.count < 2010 {
            let before = sent.count
            let handles = sent.suffix(2).map(\.handle)
            for handle in handles { sent += scheduler.completed(handle, count: 1) }
            #expect(sent.count > before, "no progress at \(before)")
            if sent.count == before { break }
        }
        let first = sent.filter { $0.handle == 0x40 }.map { Int($0.data[0]) | Int($0.data[1]) << 8 }
        let second = sent.filter { $0.handle == 0x41 }.map { Int($0.data[0]) | Int($0.data[1]) << 8 }
        #expect(first == Array(0..<2000))
        #expect(second == Array(10_000..<10_010))
        // The second link was not kept waiting behind the first's 2000: turns alternate.
        let lastOfSecond = try #require(sent.lastIndex { $0.handle == 0x41 })
        #expect(lastOfSecond < 40)
        #expect(scheduler.credits <= 4)
    }

    @Test func aClosedLinksQueueIsDroppedAndItsBytesFreed() throws {
        var scheduler = ACLScheduler(fragmentLength: 27, bufferCount: 1)
        scheduler.open(0x40)
        for n in 0..<100 { _ = try scheduler.enqueue(0x40, pdu: Self.pdu(n)) }
        #expect(scheduler.close(0x40).isEmpty)
        scheduler.open(0x40)
        // Room for a whole queue again, and the first fragment goes at once.
        let now = try scheduler.enqueue(0x40, pdu: Self.pdu(7))
        #expect(now.map { Int($0.data[0]) } == [7])
        var full: ACLScheduler.Failure?
        do {
            for n in 0...(ACLScheduler.maximumQueuedBytes / 27 + 1) { _ = try scheduler.enqueue(0x40, pdu: Self.pdu(n)) }
        } catch { full = error }
        #expect(full == .queueFull)
    }
}
