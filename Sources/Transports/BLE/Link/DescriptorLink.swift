import Dispatch
import HAL
import Foundation
import LinuxIO
import Synchronization

/// What differs between the three transports once their descriptor is open: how the kernel's
/// answers become ``HCILinkError``s. The reading thread, the serialized writes and closing are shared.
struct LinkBehaviour: Sendable {
    /// Large enough for the biggest single read the transport hands over (a whole packet on the user channel).
    var readBufferSize: Int = 4096
    /// On TCP a 0-byte read is end of file. A raw tty (VMIN=0, VTIME=0) also returns 0 when merely
    /// empty, so there only a hang-up (POLLHUP/POLLERR) together with 0 bytes means the end.
    var zeroReadIsEndOfFile: Bool
    var endOfFile: HCILinkError
    var readError: @Sendable (Errno) -> HCILinkError
    var writeError: @Sendable (Errno) -> HCILinkError
    /// write(2), or send(2) with MSG_NOSIGNAL on sockets so a closed peer is an error, not SIGPIPE.
    var send: @Sendable (FileDescriptor, UnsafeRawBufferPointer) throws(Errno) -> Int = { fd, bytes throws(Errno) in
        try fd.write(from: bytes)
    }
    /// How long a write may make no progress before it fails instead of hanging.
    var writeStallLimit: Duration = .seconds(5)
    /// Bytes read and not yet taken by the host before the reading thread stops reading.
    var receiveBudget = 256 * 1024
    /// Each read returns one whole packet (the user channel): after a read the next packet may
    /// be waiting, so read on until the descriptor is empty. On a byte stream (TCP, a tty) a read
    /// that fills less than the buffer has emptied it, so the thread goes straight back to poll
    /// instead of spending a read on finding nothing (EAGAIN): two system calls per arrival, not three.
    var readsWholePackets = false
}

/// One open, non-blocking descriptor with a dedicated reading thread.
///
/// The thread blocks in poll(2) with no timeout, on the descriptor and a ``WakeEvent`` that
/// ``close()`` signals: a quiet link costs no CPU at all (no ticks, no spinning), and a close is
/// noticed at once. The descriptor itself lives inside the writers' lock and is closed under it,
/// so a write can never hit a number the kernel has already handed to someone else.
final class DescriptorLink: Sendable {
    /// How often a stalled write looks again whether the link was closed meanwhile.
    static let pollMilliseconds: Int32 = 50

    let description: String
    private let behaviour: LinkBehaviour
    private let descriptor: Mutex<FileDescriptor?>
    private let state = Mutex(State())
    /// What the reading thread has read and the consumer not yet taken, at most a budget.
    private let queue: ChunkQueue
    /// Wakes the reading thread out of poll(2) when the link is closed; nil only when the
    /// kernel would not give an eventfd, and then the thread polls with a timeout instead.
    private let wake: WakeEvent?
    /// The reading thread's kernel id, once it runs: tests read its CPU time.
    private let readerThread = Mutex<Int32?>(nil)

    private struct State {
        var closing = false
        var finished = false
        var failure: HCILinkError?
        var incomingTaken = false
        /// Runs on the reading thread instead of the queue, once ``deliver(to:)`` was called.
        var receiver: (any HCIChunkReceiver)?
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Takes ownership of `fd` (which must be non-blocking) and starts reading at once, so nothing
    /// the device sends before the consumer calls ``incoming()`` is lost.
    init(fd: FileDescriptor, description: String, behaviour: LinkBehaviour) {
        self.description = description
        self.behaviour = behaviour
        descriptor = Mutex(fd)
        queue = ChunkQueue(budget: behaviour.receiveBudget)
        wake = try? WakeEvent()
        BlockingWork.start("hci-read \(description)") { [self] in readLoop(fd) }
    }

    /// The open descriptor (nil once closed), so tests can check socket options and termios.
    var rawDescriptor: Int32? { descriptor.withLock { $0?.rawValue } }

    /// The reading thread's kernel thread id (nil until it has started), for tests that check
    /// what it costs while the link is quiet.
    var readingThreadID: Int32? { readerThread.withLock { $0 } }

    /// Bytes read and queued for a consumer that has not taken them (tests: the link reads
    /// before anyone asks).
    var queuedBytes: Int { queue.waitingBytes }

    /// The most one read takes.
    var readBufferSize: Int { behaviour.readBufferSize }

    func incoming() -> AsyncThrowingStream<[UInt8], any Error> {
        let first = state.withLock { state in
            defer { state.incomingTaken = true }
            return !state.incomingTaken
        }
        if first {
            let queue = queue
            return AsyncThrowingStream(unfolding: { try await queue.next() })
        }
        let error = HCILinkError.io("\(description): incoming() was already called; it has exactly one consumer")
        return AsyncThrowingStream { $0.finish(throwing: error) }
    }

    /// The writers' turn-taking: one packet's bytes never interleave with another's.
    private let writers = AsyncLock()

    /// Hands every chunk to `receiver` on the reading thread from now on, those queued before
    /// it came first (the thread is woken to hand them over at once). Replaces ``incoming()``:
    /// one consumer, whichever way it reads.
    func deliver(to receiver: any HCIChunkReceiver) {
        enum Start { case taken, running, ended(HCILinkError?, drain: Bool) }
        let start = state.withLock { state -> Start in
            defer { state.incomingTaken = true }
            guard !state.incomingTaken else { return .taken }
            // Already over (the peer hung up before anyone asked): what was read, then the end.
            if state.finished { return .ended(state.failure, drain: !state.closing) }
            state.receiver = receiver
            return .running
        }
        switch start {
        case .taken:
            receiver.ended(.io("\(description): the link already has a consumer; it has exactly one"))
        case .running:
            wake?.signal()
        case .ended(let failure, let drain):
            if drain {
                for chunk in queue.drain() { _ = chunk.withUnsafeBytes { receiver.receive($0) } }
            }
            receiver.ended(failure)
        }
    }

    /// Writes every byte without ever blocking a thread of Swift's cooperative pool: what the
    /// descriptor takes at once is written here, and a stalled rest is finished on a thread of its
    /// own (so a full socket or a stopped UART cannot freeze the tasks that would unblock it).
    func send(_ bytes: [UInt8]) async throws(HCILinkError) {
        if bytes.isEmpty { return }
        await writers.acquire()
        defer { writers.release() }
        let written = try writeAvailable(bytes)
        guard written < bytes.count else { return }
        let rest = Array(bytes[written...])
        try await BlockingWork.run("hci-write") { [self] () throws(HCILinkError) in try self.write(rest) }
    }

    /// Writes what the descriptor accepts without waiting; returns how many bytes that was.
    private func writeAvailable(_ bytes: [UInt8]) throws(HCILinkError) -> Int {
        try writeLocked(bytes, waitWhileFull: false)
    }

    /// Writes every byte, waiting in poll(2) while the descriptor is full: call it from a thread
    /// of its own (``send(_:)`` does), never from a task.
    func write(_ bytes: [UInt8]) throws(HCILinkError) {
        if bytes.isEmpty { return }
        _ = try writeLocked(bytes, waitWhileFull: true)
    }

    /// The one write loop, under the descriptor's lock: interrupted writes are retried, and a full
    /// descriptor either ends the call (returning what was written) or is waited on in poll(2)
    /// until the stall limit. Returns how many bytes were written.
    private func writeLocked(_ bytes: [UInt8], waitWhileFull: Bool) throws(HCILinkError) -> Int {
        try descriptor.withLock { (fd: inout FileDescriptor?) throws(HCILinkError) -> Int in
            guard let fd else { throw stopReason() ?? .closed(description) }
            var offset = 0
            var lastProgress = ContinuousClock.now
            while offset < bytes.count {
                if let reason = stopReason() { throw reason }
                let sent = bytes.withUnsafeBytes { raw in
                    Result { () throws(Errno) -> Int in try behaviour.send(fd, UnsafeRawBufferPointer(rebasing: raw[offset...])) }
                }
                switch sent {
                case .success(let n) where n > 0:
                    offset += n
                    lastProgress = .now
                    continue
                case .success: break
                case .failure(let error):
                    guard error == .wouldBlock else { throw behaviour.writeError(error) }
                }
                guard waitWhileFull else { break }
                if ContinuousClock.now - lastProgress > behaviour.writeStallLimit {
                    throw .writeStalled(description, seconds: behaviour.writeStallLimit.inSeconds)
                }
                _ = try? fd.poll(for: .writable, timeoutMilliseconds: Self.pollMilliseconds)
            }
            return offset
        }
    }

    /// Ends ``incoming()`` and waits (at most about one poll timeout) for the thread to release the descriptor.
    func close() async {
        if requestClose() { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { state in
                if !state.exited { state.exitWaiters.append(waiter) }
                return state.exited
            }
            if exited { waiter.resume() }
        }
    }

    /// The non-waiting half of close(), for deinit. Returns whether the thread has already exited.
    @discardableResult
    func requestClose() -> Bool {
        let exited = state.withLock { state in
            state.closing = true
            return state.exited
        }
        wake?.signal()
        finish(nil)
        return exited
    }

    /// Why writes must stop: the failure that ended reading, or a local close.
    private func stopReason() -> HCILinkError? {
        state.withLock { state in
            if let failure = state.failure { return failure }
            return state.closing ? .closed(description) : nil
        }
    }

    private func finish(_ failure: HCILinkError?) {
        let (first, receiver) = state.withLock { state in
            defer { state.finished = true }
            if !state.finished && !state.closing { state.failure = failure }
            return (!state.finished, state.receiver)
        }
        guard first else { return }
        queue.finish(failure)
        receiver?.ended(failure)
    }

    private func readLoop(_ fd: FileDescriptor) {
        readerThread.withLock { $0 = CurrentThread.id }
        var buffer = [UInt8](repeating: 0, count: behaviour.readBufferSize)
        var failure: HCILinkError?
        // While bytes keep coming, read again before polling: one system call per chunk instead
        // of two. The first read that finds nothing (EAGAIN), or on a byte stream a read that did
        // not fill the buffer, goes back to waiting in poll: reading on would spin or find nothing.
        var streaming = false
        // Set once a receiver has taken over from the queue (and got what the queue held).
        var receiver: (any HCIChunkReceiver)?
        // Built once: an option-set literal in the loop costs a generic set construction per arrival.
        let hangUpOrError: FileDescriptor.PollEvents = FileDescriptor.PollEvents.hangUp.union(.error)
        while !state.withLock({ $0.closing }) {
            var hungUp = false
            if !streaming {
                let poll: FileDescriptor.WakeablePoll
                do { poll = try waitReadable(fd) } catch {
                    failure = .io("\(description): poll failed: \(error)")
                    break
                }
                if poll.woken {
                    // Close or a new receiver: clear the signal, then look at both (a close that
                    // signals after this is seen by the next poll, one before by the loop's check).
                    wake?.reset()
                    if receiver == nil, let arrived = state.withLock({ $0.receiver }) {
                        receiver = arrived
                        if !handOverQueued(to: arrived) { break }
                    }
                }
                let events = poll.events
                if events.isEmpty { continue }
                if events.contains(.invalid) {
                    failure = .io("\(description): descriptor became invalid")
                    break
                }
                hungUp = !events.isDisjoint(with: hangUpOrError)
            }
            let read = buffer.withUnsafeMutableBytes { raw in Result { () throws(Errno) -> Int in try fd.read(into: raw) } }
            guard case .success(let count) = read else {
                if case .failure(let error) = read, error == .wouldBlock {
                    streaming = false
                    continue
                }
                if case .failure(let error) = read { failure = behaviour.readError(error) }
                break
            }
            streaming = count > 0 && (behaviour.readsWholePackets || count == buffer.count)
            if count > 0 {
                if receiver == nil, let arrived = state.withLock({ $0.receiver }) {
                    receiver = arrived
                    if !handOverQueued(to: arrived) { break }
                }
                if let receiver {
                    let behind = buffer.withUnsafeBytes { raw in receiver.receive(UnsafeRawBufferPointer(rebasing: raw[..<count])) }
                    if behind && !waitForRoom(in: receiver) { break }
                } else if !queue.put(Array(buffer[..<count]), stop: { state.withLock { $0.closing } }) {
                    // Waits while the consumer is a budget behind: the kernel then pushes back.
                    break
                }
            } else if behaviour.zeroReadIsEndOfFile || hungUp {
                failure = behaviour.endOfFile
                break
            }
        }
        finish(failure)
        descriptor.withLock { fd in
            fd?.close()
            fd = nil
        }
        wake?.close()
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Gives a receiver that has just arrived what the queue held for it, in order. Returns
    /// false when the link was closed meanwhile.
    private func handOverQueued(to receiver: any HCIChunkReceiver) -> Bool {
        for chunk in queue.drain() {
            let behind = chunk.withUnsafeBytes { receiver.receive($0) }
            if behind && !waitForRoom(in: receiver) { return false }
        }
        return true
    }

    /// The receiver is behind: this thread stops reading (so the kernel pushes back) until it
    /// has room, looking every poll interval whether the link was closed. Returns false when it was.
    private func waitForRoom(in receiver: any HCIChunkReceiver) -> Bool {
        let room = DispatchSemaphore(value: 0)
        let waiter = Task.detached {
            await receiver.waitForRoom()
            room.signal()
        }
        while room.wait(timeout: .now() + .milliseconds(Int(Self.pollMilliseconds))) == .timedOut {
            if state.withLock({ $0.closing }) {
                waiter.cancel()
                return false
            }
        }
        return true
    }

    /// Blocks until `fd` is readable (or hung up) or the wake event is signalled (a close, a new
    /// receiver); empty events mean "look at the closing flag". Without a wake event it polls
    /// with a timeout and reports each timeout as a wake.
    private func waitReadable(_ fd: FileDescriptor) throws(Errno) -> FileDescriptor.WakeablePoll {
        guard let wake else {
            let events = try fd.poll(for: .readable, timeoutMilliseconds: Self.pollMilliseconds)
            return FileDescriptor.WakeablePoll(events: events, woken: events.isEmpty)
        }
        return try fd.poll(for: .readable, orWake: wake)
    }
}
