import Dispatch
import Synchronization

/// The bytes a link's reading thread hands to its one consumer, with a byte budget: when the
/// consumer falls behind by `budget` bytes the thread stops reading, so the kernel's own flow
/// control (TCP windows, a tty's RTS, the user channel's socket buffer) pushes back on the
/// controller instead of the process buffering without end. A flood of advertising reports then
/// costs at most the budget, not whatever the peer can send.
final class ChunkQueue: Sendable {
    let budget: Int

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var bytes = 0
        var ended = false
        var failure: HCILinkError?
        var consumer: CheckedContinuation<[UInt8]?, any Error>?
        /// The reading thread waits for room: the next take signals it (only then, so the
        /// semaphore never piles up signals that would make a later wait return at once).
        var producerWaiting = false
    }

    private let state = Mutex(State())
    private let room = DispatchSemaphore(value: 0)

    init(budget: Int = 256 * 1024) {
        self.budget = max(1, budget)
    }

    /// Bytes waiting for the consumer.
    var waitingBytes: Int { state.withLock { $0.bytes } }

    /// From the reading thread: waits (in slices of `slice`, asking `stop` between them) until
    /// the consumer has made room, then queues `chunk`. Returns false when `stop` said so.
    func put(_ chunk: [UInt8], slice: DispatchTimeInterval = .milliseconds(50), stop: () -> Bool) -> Bool {
        while true {
            if stop() { return false }
            let waiter = state.withLock { s -> CheckedContinuation<[UInt8]?, any Error>?? in
                guard !s.ended else { return .some(nil) }
                if let consumer = s.consumer {
                    s.consumer = nil
                    return .some(consumer)
                }
                guard s.bytes < budget else {
                    s.producerWaiting = true
                    return .none
                }
                s.chunks.append(chunk)
                s.bytes += chunk.count
                return .some(nil)
            }
            switch waiter {
            case .some(let consumer):
                consumer?.resume(returning: chunk)
                return true
            case .none:
                _ = room.wait(timeout: .now() + slice)
            }
        }
    }

    /// From the reading thread, when a receiver takes over from the consumer: everything queued,
    /// in order, leaving the queue empty.
    func drain() -> [[UInt8]] {
        state.withLock { s in
            defer {
                s.chunks = []
                s.head = 0
                s.bytes = 0
            }
            return Array(s.chunks[s.head...])
        }
    }

    /// From the reading thread: no more chunks; `failure` ends the consumer's stream with it.
    func finish(_ failure: HCILinkError?) {
        let consumer = state.withLock { s -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !s.ended else { return nil }
            s.ended = true
            s.failure = failure
            defer { s.consumer = nil }
            return s.consumer
        }
        if let consumer {
            if let failure { consumer.resume(throwing: failure) } else { consumer.resume(returning: nil) }
        }
        room.signal()
    }

    /// The consumer's next chunk; nil at the end (or when its task is cancelled).
    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                var wake = false
                let outcome = state.withLock { s -> Result<[UInt8]?, any Error>? in
                    if s.head < s.chunks.count {
                        wake = s.producerWaiting
                        s.producerWaiting = false
                        let chunk = s.chunks[s.head]
                        s.head += 1
                        s.bytes -= chunk.count
                        if s.head == s.chunks.count || s.head > 64 {
                            s.chunks.removeFirst(s.head)
                            s.head = 0
                        }
                        return .success(chunk)
                    }
                    if s.ended { return s.failure.map { .failure($0) } ?? .success(nil) }
                    s.consumer = continuation
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                    if wake { room.signal() }
                }
            }
        } onCancel: {
            let consumer = state.withLock { s -> CheckedContinuation<[UInt8]?, any Error>? in
                defer { s.consumer = nil }
                return s.consumer
            }
            consumer?.resume(returning: nil)
        }
    }
}
