import BLEProtocol
import Foundation
import Glibc
import HAL
import HALFakes
import LinuxIO
import Synchronization
import Testing
@_spi(Fuzzing) @testable import Transports

/// The receive path that runs where the bytes arrive (issue 26): values go to subscribers in
/// batches and in order, the queue's bounds hold for a batch as for single values, a link's
/// data waits behind whatever of it the host has not handled yet, waits end when cancelled,
/// and a descriptor link hands its receiver everything, queued bytes first.
@Suite(.timeLimit(.minutes(1))) struct ReceivePathTests {
    static func notification(_ handle: UInt16, _ value: UInt16) -> [UInt8] {
        SlowSubscriberTests.notification(handle, value)
    }

    static func number(_ value: [UInt8]) -> Int { Int(value[0]) | Int(value[1]) << 8 }

    /// H4 bytes of one ATT PDU on `handle` as one ACL packet.
    static func h4(_ handle: UInt16, _ pdu: [UInt8]) -> [UInt8] {
        ScriptedController.att(handle: handle, pdu)
    }

    // MARK: NotificationQueue

    @Test func aBatchPushedAtOnceIsTakenInOrder() async {
        let queue = NotificationQueue<Int>(capacity: 1024, limit: 4096)
        let pushed = queue.push(contentsOf: Array(0..<300))
        #expect(pushed.dropped == 0 && !pushed.congested)
        var seen: [Int] = []
        for _ in 0..<300 { seen.append(await queue.next() ?? -1) }
        #expect(seen == Array(0..<300))
    }

    /// `hwprobe check` races a fresh iterator against a deadline for every value: a batch
    /// must stay in the shared queue, not in the iterator that took its first value.
    @Test func aFreshIteratorForEachValueLosesNoneOfABatch() async {
        let queue = NotificationQueue<Int>(capacity: 1024, limit: 4096)
        let values = NotificationValues(queue)
        queue.push(contentsOf: Array(0..<10))
        var seen: [Int] = []
        for _ in 0..<10 {
            var iterator = values.makeAsyncIterator()
            seen.append(await iterator.next() ?? -1)
        }
        #expect(seen == Array(0..<10))
    }

    @Test func aWaitingConsumerGetsAWholeBatchInOneResume() async {
        let queue = NotificationQueue<Int>(capacity: 1024, limit: 4096)
        let values = NotificationValues(queue)
        // The consumer reads in its own task; the values come in batches of various sizes.
        let reader = Task {
            var seen: [Int] = []
            for await value in values {
                seen.append(value)
                if seen.count == 2000 { break }
            }
            return seen
        }
        var next = 0
        for size in [1, 7, 300, 1, 50, 641, 1000] {
            queue.push(contentsOf: Array(next..<next + size))
            next += size
        }
        #expect(await reader.value == Array(0..<2000))
    }

    @Test func aBatchBeyondTheLimitKeepsTheNewestAndCountsTheRest() async {
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { _ throws(BLEError) in }
        let values = bearer.values(of: 0x0010)
        let total = ATTBearer.subscriberLimit + 500
        // One chunk's worth of PDUs, handed over in one call.
        let congested = bearer.receive((0..<total).map { Self.notification(0x0010, UInt16($0)) })
        #expect(congested, "a queue past its high-water mark says so")
        #expect(bearer.notificationsReceived == total)
        #expect(bearer.notificationsDropped == 500)
        bearer.close(.disconnected(.remoteUserTerminated))
        var seen: [Int] = []
        for await value in values { seen.append(Self.number(value)) }
        #expect(seen == Array(500..<total))
    }

    @Test func cancellingAWaitingSubscriberEndsItsWaitAtOnce() async {
        let queue = NotificationQueue<Int>(capacity: 16, limit: 64)
        let values = NotificationValues(queue)
        let reader = Task { () -> Int? in
            var iterator = values.makeAsyncIterator()
            return await iterator.next()
        }
        reader.cancel()
        #expect(await reader.value == nil)
    }

    // MARK: HCIReceiver

    @Test func aChunkOfNotificationsReachesTheSubscriberInOrderWithoutTheHost() async {
        let receiver = HCIReceiver(snoop: nil, tap: nil)
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { _ throws(BLEError) in }
        receiver.open(0x0040, bearer)
        let values = bearer.values(of: 0x0010)
        // 500 notifications in one chunk, split in the middle of a packet before the next chunk.
        let bytes = (0..<500).flatMap { Self.h4(0x0040, Self.notification(0x0010, UInt16($0))) }
        let cut = bytes.count / 2 + 3
        #expect(!Array(bytes[..<cut]).withUnsafeBytes { receiver.receive($0) })
        #expect(!Array(bytes[cut...]).withUnsafeBytes { receiver.receive($0) })
        #expect(bearer.notificationsReceived == 500)
        #expect(receiver.inbox.weight == 0, "nothing went to the host")
        var seen: [Int] = []
        for await value in values {
            seen.append(Self.number(value))
            if seen.count == 500 { break }
        }
        #expect(seen == Array(0..<500))
    }

    @Test func dataForALinkWaitsBehindWhatTheHostHasNotHandledYet() async {
        let receiver = HCIReceiver(snoop: nil, tap: nil)
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { _ throws(BLEError) in }
        let feed = { (value: UInt16) in
            _ = Self.h4(0x0040, Self.notification(0x0010, value)).withUnsafeBytes { receiver.receive($0) }
        }
        feed(0) // before the link is open: the host's
        receiver.open(0x0040, bearer)
        feed(1) // open, but the host has not handled the first yet: the host's too, behind it
        #expect(bearer.notificationsReceived == 0)
        for expected: UInt16 in [0, 1] {
            guard case .frame(let handle, let frame) = await receiver.inbox.next() else {
                Issue.record("expected a frame for the host")
                return
            }
            #expect(handle == 0x0040 && frame.payload == Self.notification(0x0010, expected))
            receiver.frameHandled(handle)
        }
        feed(2) // nothing left on the host: straight to the bearer
        #expect(bearer.notificationsReceived == 1)
        #expect(receiver.inbox.weight == 0)
    }

    @Test func eventsGoToTheHostInOrderAndAFullInboxAsksTheReaderToWait() async {
        let receiver = HCIReceiver(snoop: nil, tap: nil, inboxBudget: 64)
        let report = ScriptedController.advertisingReport(BLEAddress(string: "C0:00:00:00:00:01/random")!, data: [2, 1, 6])
        var behind = false
        var fed = 0
        while !behind {
            behind = report.withUnsafeBytes { receiver.receive($0) }
            fed += 1
        }
        #expect(fed > 1 && fed < 64, "the budget is in bytes: \(fed) reports")
        // The reader's wait ends once the host has taken the inbox down to half.
        let waiter = Task { await receiver.waitForRoom() }
        var taken = 0
        while receiver.inbox.weight > receiver.inbox.budget / 2 {
            guard case .event = await receiver.inbox.next() else { break }
            taken += 1
        }
        await waiter.value
        #expect(taken >= 1)
    }

    @Test func cancellingTheReadersWaitForTheInboxEndsIt() async {
        let inbox = BoundedInbox<Int>(budget: 4)
        #expect(inbox.push(1, weight: 8))
        let waiter = Task { await inbox.waitForRoom() }
        waiter.cancel()
        await waiter.value
        #expect(inbox.weight == 8, "nothing was taken: the wait ended because it was cancelled")
    }

    @Test func theEndOfTheStreamReachesTheHostAfterEverythingBeforeIt() async {
        let receiver = HCIReceiver(snoop: nil, tap: nil)
        _ = ScriptedController.disconnectionComplete(handle: 0x0040, reason: 0x13).withUnsafeBytes { receiver.receive($0) }
        receiver.ended(.closedByPeer("test"))
        guard case .event(.disconnectionComplete) = await receiver.inbox.next() else {
            Issue.record("the event first")
            return
        }
        guard case .ended(let error) = await receiver.inbox.next() else {
            Issue.record("then the end")
            return
        }
        #expect("\(error)".contains("test"))
        #expect(await receiver.inbox.next() == nil)
    }

    // MARK: DescriptorLink with a receiver

    @Test func aLinkHandsItsReceiverTheBytesReadBeforeItCameFirstThenTheRestInOrder() async throws {
        let (link, peer, _) = try DescriptorLinkTests.pair()
        defer { close(peer) }
        let early = (0..<100).map { UInt8($0) }
        try LinkPeer.write(peer, early)
        // Read (and queued) before any receiver exists: the link reads from the start.
        while link.queuedBytes < early.count { await Task.yield() }
        let receiver = RecordingReceiver()
        link.deliver(to: receiver)
        var expected = early
        for round in 0..<50 {
            let chunk = (0..<(round % 13 + 1)).map { UInt8(truncatingIfNeeded: 100 + round * 13 + $0) }
            expected += chunk
            try LinkPeer.write(peer, chunk)
        }
        #expect(await receiver.bytes(count: expected.count) == expected)
        await link.close()
        #expect(await receiver.end() == .some(nil), "a local close ends the receiver without a failure")
    }

    @Test func aReceiverThatComesAfterThePeerHungUpGetsWhatWasReadThenTheEnd() async throws {
        let (link, peer, _) = try DescriptorLinkTests.pair()
        try LinkPeer.write(peer, [7, 8, 9])
        close(peer)
        // The reading thread has seen the end once it released the descriptor.
        while link.rawDescriptor != nil { await Task.yield() }
        let receiver = RecordingReceiver()
        link.deliver(to: receiver)
        #expect(await receiver.bytes(count: 3) == [7, 8, 9])
        #expect(await receiver.end() == .some(.closedByPeer("test")))
    }

    @Test func aReceiverThatIsBehindStopsTheReadingThreadSoTheKernelPushesBack() async throws {
        let (link, peer, _) = try DescriptorLinkTests.pair()
        defer { close(peer) }
        let receiver = RecordingReceiver(behind: true)
        link.deliver(to: receiver)
        let chunk = [UInt8](repeating: 0x3E, count: 64 * 1024)
        var accepted = 0
        let cap = 64 << 20
        while accepted < cap {
            let n = chunk.withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                accepted += n
                continue
            }
            guard errno == EAGAIN else { break }
            if !LinkPeer.wait(peer, for: Int32(POLLOUT), until: .now + .milliseconds(300)) { break }
        }
        #expect(accepted < 16 << 20, "\(accepted) bytes taken while the receiver was behind")
        #expect(receiver.received <= link.readBufferSize, "one read, then the thread waited")
        receiver.catchUp()
        #expect(await receiver.bytes(count: accepted).count == accepted)
        await link.close()
    }

    @Test func closeEndsAReadingThreadThatWaitsForItsReceiver() async throws {
        let (link, peer, _) = try DescriptorLinkTests.pair()
        defer { close(peer) }
        let receiver = RecordingReceiver(behind: true)
        link.deliver(to: receiver)
        try LinkPeer.write(peer, [1, 2, 3])
        _ = await receiver.bytes(count: 3)
        await link.close()
        #expect(await receiver.end() == .some(nil))
        #expect(link.rawDescriptor == nil, "the thread ended and released the descriptor")
    }
}

/// Records what a link hands it. `behind`: says it is behind after every chunk, and its wait for
/// room lasts until `catchUp()` (then it never says so again).
final class RecordingReceiver: HCIChunkReceiver {
    private struct State {
        var bytes: [UInt8] = []
        var behind: Bool
        var ended: HCILinkError?? = .none
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var byteWaiters: [(count: Int, continuation: CheckedContinuation<[UInt8], Never>)] = []
        var endWaiters: [CheckedContinuation<HCILinkError??, Never>] = []
    }

    private let state: Mutex<State>

    init(behind: Bool = false) {
        state = Mutex(State(behind: behind))
    }

    var received: Int { state.withLock { $0.bytes.count } }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (behind, ready) = state.withLock { s -> (Bool, [(CheckedContinuation<[UInt8], Never>, [UInt8])]) in
            s.bytes += bytes
            let ready = s.byteWaiters.filter { $0.count <= s.bytes.count }.map { ($0.continuation, Array(s.bytes[..<$0.count])) }
            s.byteWaiters.removeAll { $0.count <= s.bytes.count }
            return (s.behind, ready)
        }
        for (waiter, bytes) in ready { waiter.resume(returning: bytes) }
        return behind
    }

    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if !s.behind { return true }
                s.roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func ended(_ failure: HCILinkError?) {
        let (waiters, room) = state.withLock { s in
            s.ended = .some(failure)
            defer {
                s.endWaiters = []
                s.roomWaiters = []
            }
            return (s.endWaiters, s.roomWaiters)
        }
        for waiter in waiters { waiter.resume(returning: .some(failure)) }
        for waiter in room { waiter.resume() }
    }

    func catchUp() {
        let waiters = state.withLock { s in
            s.behind = false
            defer { s.roomWaiters = [] }
            return s.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The first `count` bytes, once that many have come.
    func bytes(count: Int) async -> [UInt8] {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> [UInt8]? in
                if s.bytes.count >= count { return Array(s.bytes[..<count]) }
                s.byteWaiters.append((count, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// How the stream ended, once it has: `.some(nil)` for a local close.
    func end() async -> HCILinkError?? {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { s -> HCILinkError??? in
                if case .some = s.ended { return .some(s.ended) }
                s.endWaiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}
