import Synchronization

/// What a subscriber's queue is: the host asks it whether to stop reading for a while.
protocol SubscriberQueue: AnyObject, Sendable {
    /// Fuller than the high-water mark, with a consumer that has not been given up on.
    var isCongested: Bool { get }
    /// Returns once the consumer has taken the queue down to the low-water mark, or has gone away,
    /// or the caller is cancelled.
    func waitForRoom() async
    /// The consumer did not drain within the host's limit: no more waits for it until it drains,
    /// and the queue keeps only its newest `capacity` values. Returns how many it let go.
    func markStalled() -> Int
}

/// The values one subscriber has not taken yet, bounded, with back-pressure for the host.
///
/// A peer's notifications cannot be refused, but a host can stop reading its transport for a
/// moment, and then the kernel's flow control (TCP windows, a tty's RTS, a controller's buffers)
/// holds the peer back. So when a queue passes its high-water mark (three quarters of `capacity`)
/// the host waits, for a bounded time, until its consumer has taken it down to a quarter; nothing
/// is lost to a consumer that is merely slower than the link for a while, and one thread running
/// both sides still gets to the consumer. Between those checks the queue may grow to `limit`
/// (one chunk read from the transport can carry hundreds of values). A consumer that does not
/// drain within the host's limit is *stalled*: the host stops waiting for it, its queue keeps the
/// newest `capacity` values and counts the older ones it let go, until it drains again.
///
/// Values arrive in batches: what one chunk from the controller brought is pushed at once, so a
/// waiting consumer is resumed once for the lot (it gets the first, the rest wait in the queue
/// and it takes them without suspending). The consumer still takes one value at a time from the
/// shared queue: every iterator of a sequence sees the next value, so a caller that makes a
/// fresh iterator for each value (racing it against a deadline) loses nothing.
final class NotificationQueue<Element: Sendable>: SubscriberQueue, Sendable {
    let capacity: Int
    let limit: Int

    private struct State {
        var items: [Element] = []
        var head = 0
        var consumer: CheckedContinuation<Element?, Never>?
        var producer: CheckedContinuation<Void, Never>?
        var finished = false
        /// Every handle on the consumer's side (the sequence and its iterators) is gone.
        var abandoned = false
        var stalled = false
        var dropped = 0

        var depth: Int { items.count - head }

        mutating func take() -> Element {
            let item = items[head]
            head += 1
            compact()
            return item
        }

        private mutating func compact() {
            if head == items.count || head > 256 {
                items.removeFirst(head)
                head = 0
            }
        }
    }

    private let state = Mutex(State())

    init(capacity: Int, limit: Int) {
        self.capacity = max(4, capacity)
        self.limit = max(self.capacity, limit)
    }

    private var highWater: Int { capacity * 3 / 4 }
    private var lowWater: Int { capacity / 4 }

    /// Values let go because the queue was full.
    var dropped: Int { state.withLock { $0.dropped } }

    var isCongested: Bool {
        state.withLock { !$0.finished && !$0.abandoned && !$0.stalled && $0.depth >= highWater }
    }

    /// Hands `value` to the consumer (at once when it waits). Says whether the oldest value had
    /// to go to make room, and whether the queue is now congested (the host should wait).
    @discardableResult
    func push(_ value: Element) -> (dropped: Bool, congested: Bool) {
        let pushed = push(contentsOf: [value])
        return (pushed.dropped > 0, pushed.congested)
    }

    /// Hands `values` to the consumer in order, resuming it (once) when it waits. Says how many
    /// of the oldest values had to go to make room, and whether the queue is now congested.
    @discardableResult
    func push(contentsOf values: [Element]) -> (dropped: Int, congested: Bool) {
        var outcome = (dropped: 0, congested: false)
        guard !values.isEmpty else { return outcome }
        let handOver = state.withLock { s -> (CheckedContinuation<Element?, Never>, Element)? in
            guard !s.finished, !s.abandoned else { return nil }
            var rest = values[...]
            var handOver: (CheckedContinuation<Element?, Never>, Element)?
            if let consumer = s.consumer, let first = rest.popFirst() {
                s.consumer = nil
                handOver = (consumer, first)
            }
            for value in rest {
                if s.depth >= (s.stalled ? capacity : limit) {
                    _ = s.take()
                    s.dropped += 1
                    outcome.dropped += 1
                }
                s.items.append(value)
            }
            outcome.congested = !s.stalled && s.depth >= highWater
            return handOver
        }
        if let (consumer, first) = handOver { consumer.resume(returning: first) }
        return outcome
    }

    /// No more values: the consumer gets what is queued, then the end.
    func finish() {
        let (consumer, producer) = state.withLock { s in
            s.finished = true
            defer { s.consumer = nil; s.producer = nil }
            return (s.depth == 0 ? s.consumer : nil, s.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    func markStalled() -> Int {
        state.withLock { s in
            s.stalled = true
            var trimmed = 0
            while s.depth > capacity {
                _ = s.take()
                trimmed += 1
            }
            s.dropped += trimmed
            return trimmed
        }
    }

    func waitForRoom() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.finished || s.abandoned || s.stalled || s.depth <= lowWater || Task.isCancelled { return true }
                    s.producer?.resume()
                    s.producer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            releaseProducer()
        }
    }

    private func releaseProducer() {
        let producer = state.withLock { s in
            defer { s.producer = nil }
            return s.producer
        }
        producer?.resume()
    }

    /// The consumer's side has gone: values are no longer kept, the host no longer waits.
    fileprivate func abandon() {
        let producer = state.withLock { s in
            s.abandoned = true
            s.items = []
            s.head = 0
            defer { s.producer = nil }
            return s.producer
        }
        producer?.resume()
    }

    /// The next value, waiting for one; nil once the subscription has ended (or the caller is
    /// cancelled).
    func next() async -> Element? {
        // The common case while values stream in batches: one is waiting. Taken without the
        // continuation and cancellation-handler set-up, which cost more than the value itself.
        if let ready = takeWaiting() { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                var producer: CheckedContinuation<Void, Never>?
                let outcome = state.withLock { s -> Element?? in
                    if s.depth > 0 {
                        let item = s.take()
                        if s.depth <= lowWater {
                            producer = s.producer
                            s.producer = nil
                            s.stalled = false
                        }
                        return .some(item)
                    }
                    s.stalled = false
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.consumer = continuation
                    return nil
                }
                producer?.resume()
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let consumer = state.withLock { s in
                defer { s.consumer = nil }
                return s.consumer
            }
            consumer?.resume(returning: nil)
        }
    }
}

extension NotificationQueue {
    /// The oldest value when one is waiting (waking the host when that brings the queue down to
    /// the low-water mark); nil when the queue is empty.
    private func takeWaiting() -> Element? {
        var producer: CheckedContinuation<Void, Never>?
        let item = state.withLock { s -> Element? in
            guard s.depth > 0 else { return nil }
            let item = s.take()
            if s.depth <= lowWater {
                producer = s.producer
                s.producer = nil
                s.stalled = false
            }
            return item
        }
        producer?.resume()
        return item
    }
}

/// The values a subscription delivers, in the order they came; it ends when the link does (or
/// the subscriber's task is cancelled). One consumer: the copies of a sequence share its values.
public struct NotificationValues<Element: Sendable>: AsyncSequence, Sendable {
    /// Keeps the queue's consumer side alive; when the last sequence and iterator holding it go,
    /// the queue is abandoned, so nobody waits for a reader that will never come.
    fileprivate final class Reader: Sendable {
        let queue: NotificationQueue<Element>
        init(_ queue: NotificationQueue<Element>) { self.queue = queue }
        deinit { queue.abandon() }
    }

    private let reader: Reader

    init(_ queue: NotificationQueue<Element>) {
        reader = Reader(queue)
    }

    /// Takes values one at a time from the shared queue; ends when the link ends or the task is
    /// cancelled.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let reader: Reader

        /// The next value, waiting for one; nil once the subscription has ended.
        /// (Pre-specialized for the two element types the bearer delivers: a caller in another
        /// module would otherwise run the generic code, looking up type metadata on every call.)
        @_specialize(exported: true, where Element == [UInt8])
        @_specialize(exported: true, where Element == ATTNotification)
        public mutating func next() async -> Element? {
            await reader.queue.next()
        }
    }

    /// An iterator over the shared queue; copies of the sequence share its values.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader)
    }
}
