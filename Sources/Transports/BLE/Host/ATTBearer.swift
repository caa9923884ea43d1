import BLEProtocol
import HAL
import Synchronization

/// The ATT bearer of one link, client side: one request outstanding at a time, each with the
/// 30-second transaction timeout; notifications and indications (confirmed) go to subscribers.
/// After a transaction timeout the bearer is dead, as the ATT specification requires.
///
/// The protocol state is a value (`ATTClientTransactions`) behind a lock, so the host hands each
/// received PDU over synchronously, where its bytes arrive, and a notification reaches its
/// subscriber in one hop. PDUs go out through one ordered outbox. A caller whose task is
/// cancelled gets `BLEError.cancelled` at once; the request it made stays outstanding until the
/// peer answers (no second request may go out before), and the next caller's request follows.
public final class ATTBearer: Sendable {
    let clock: any Clock<Duration>
    private let timeout: Duration
    /// The connection handle this bearer runs on, named in the events it reports.
    private let link: UInt16
    private let events: HostEventHandler?
    private let outbox: AsyncStream<[UInt8]>.Continuation
    private let sender: Task<Void, Never>

    private struct State {
        var transactions: ATTClientTransactions
        var waiters: [Int: CheckedContinuation<ATTPDU, any Error>] = [:]
        /// Ids handed out whose continuation is not registered yet, and those of them whose
        /// caller was cancelled in that moment.
        var unregistered: Set<Int> = []
        var cancelledEarly: Set<Int> = []
        var nextID = 0
        /// The timer of the outstanding request; a newer generation makes an older firing moot.
        var timer: (generation: Int, task: Task<Void, Never>)?
        var timerGeneration = 0
        var subscribers: [UInt16: [NotificationQueue<[UInt8]>]] = [:]
        var everything: [NotificationQueue<ATTNotification>] = []
        var notificationsReceived = 0
        /// Values a subscriber's full buffer had no room for (it kept the newest).
        var notificationsDropped = 0
        /// The host's answer to a refusal for want of security (see `request`).
        var securityRemedy: SecurityRemedyHook?
    }

    private let state: Mutex<State>

    /// Values kept for a subscriber the host has given up waiting for; each is at most
    /// ATT_MTU − 3 bytes.
    public static let subscriberBuffer = 1024
    /// The most a subscriber's queue holds at all: the host looks at congestion between the
    /// chunks it reads, and one chunk may carry hundreds of notifications past the high-water mark.
    public static let subscriberLimit = 4 * subscriberBuffer
    /// How long the host stops reading for a subscriber that is behind before it gives up on it
    /// (and lets its oldest values go): long enough for a terminal to catch up, short enough that
    /// a subscriber that stopped reading holds the link up only once.
    public static let congestionLimit: Duration = .seconds(2)

    /// `send` carries a PDU to the peer; `events` hears about the MTU, subscriptions and Error
    /// Responses on `link`. Public only as SPI: the fuzz targets stand in for the peer
    /// (`@_spi(Fuzzing) import Transports`); everything else gets its bearer from a link.
    @_spi(Fuzzing) public init(clock: any Clock<Duration>, timeout: Duration, link: UInt16 = 0, events: HostEventHandler? = nil,
                               preferredMTU: UInt16 = ATTMTU.preferred, send: @escaping @Sendable ([UInt8]) async throws(BLEError) -> Void) {
        self.clock = clock
        self.timeout = timeout
        self.link = link
        self.events = events
        state = Mutex(State(transactions: ATTClientTransactions(preferredMTU: preferredMTU)))
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        outbox = continuation
        let closeOnFailure = ClosingHook()
        sender = Task {
            for await bytes in stream {
                do throws(BLEError) { try await send(bytes) } catch {
                    closeOnFailure.fire(error)
                }
            }
        }
        closeOnFailure.set { [weak self] error in self?.close(error) }
    }

    deinit {
        outbox.finish()
        sender.cancel()
    }

    /// The ATT_MTU in force: 23 until an Exchange MTU agrees on more; values sent fit in MTU − 3 bytes.
    public var mtu: UInt16 { state.withLock { $0.transactions.mtu } }
    /// Counters for tests and benchmarks.
    public var notificationsReceived: Int { state.withLock { $0.notificationsReceived } }
    /// Values that reached a subscriber too slow to take them: its buffer (`subscriberBuffer`)
    /// keeps the newest, and this counts the older ones it let go, so a consumer can say so
    /// rather than lose them silently. Only a subscriber that did not catch up within
    /// `congestionLimit` loses values: for a slower one the host stops reading for a while.
    public var notificationsDropped: Int { state.withLock { $0.notificationsDropped } }
    /// PDUs dropped as malformed, unexpected or longer than the MTU.
    public var malformedPDUs: Int { state.withLock { $0.transactions.malformed + $0.transactions.oversized } }
    /// Whether the bearer still serves requests.
    public var isOpen: Bool { state.withLock { $0.transactions.closed == nil } }

    /// Sends a request and returns its response; an Error Response throws `.att`, a cancelled
    /// caller `.cancelled`. A refusal for want of security (0x05, 0x0C, 0x0F) goes to the link's
    /// security remedy when it has one (the host's automatic pairing): once it has secured the
    /// link, the request is sent once more and that answer is final.
    public func request(_ pdu: ATTPDU) async throws(BLEError) -> ATTPDU {
        do {
            return try await transact(pdu)
        } catch .att(let failure) where SecurityRemedy.remediableCodes.contains(failure.code) {
            guard let remedy = state.withLock({ $0.securityRemedy }), try await remedy(failure) else { throw .att(failure) }
            return try await transact(pdu)
        }
    }

    /// Who secures the link when a request is refused for want of security: returns true once the
    /// link is secured (repeat the request), false when it cannot help, and throws when securing
    /// failed (the pairing's reason). Set by the host for a central's links.
    package typealias SecurityRemedyHook = @Sendable (ATTFailure) async throws(BLEError) -> Bool

    /// Installs (or with nil removes) the link's security remedy.
    package func setSecurityRemedy(_ hook: SecurityRemedyHook?) {
        state.withLock { $0.securityRemedy = hook }
    }

    /// One request and its response, with no remedy.
    private func transact(_ pdu: ATTPDU) async throws(BLEError) -> ATTPDU {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.unregistered.insert(s.nextID)
            return s.nextID
        }
        let response: ATTPDU
        do {
            response = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ATTPDU, any Error>) in
                    let outcome = state.withLock { s -> Result<ATTPDU?, BLEError> in
                        s.unregistered.remove(id)
                        if s.cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
                        do throws(BLEError) {
                            let now = try s.transactions.submit(id, pdu)
                            s.waiters[id] = continuation
                            if now != nil { armTimer(in: &s) }
                            return .success(now)
                        } catch {
                            return .failure(error)
                        }
                    }
                    switch outcome {
                    case .success(let now): if let now { outbox.yield(now.encoded) }
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                cancel(id)
            }
        } catch let error as BLEError {
            throw error
        } catch {
            throw .transport("\(error)")
        }
        if case .errorResponse(let opcode, let handle, let code) = response {
            let failure = ATTFailure(code: code, handle: handle, requestOpcode: opcode)
            events?(.attError(link: link, failure))
            throw .att(failure)
        }
        return response
    }

    /// A PDU that expects no answer (Write Command).
    public func command(_ pdu: ATTPDU) async throws(BLEError) {
        if let closed = state.withLock({ $0.transactions.closed }) { throw closed }
        outbox.yield(pdu.encoded)
    }

    /// Offers `ours` as our receive MTU and returns the MTU the link now uses (the smaller of both ends').
    public func exchangeMTU(_ ours: UInt16) async throws(BLEError) -> UInt16 {
        guard case .exchangeMTUResponse = try await request(.exchangeMTURequest(ours)) else {
            throw .attProtocolError("the answer to Exchange MTU was not an Exchange MTU Response")
        }
        let mtu = mtu
        events?(.mtuExchanged(link: link, mtu: mtu))
        return mtu
    }

    /// The GATT client tells the bearer's listener that a CCCD write turned values on.
    func reportSubscribed(_ characteristic: GATTCharacteristic, indications: Bool) {
        events?(.subscribed(link: link, characteristic: characteristic.uuid, valueHandle: characteristic.valueHandle,
                            indications: indications))
    }

    /// Values the peer notifies or indicates on this handle.
    public func values(of handle: UInt16) -> NotificationValues<[UInt8]> {
        let queue = NotificationQueue<[UInt8]>(capacity: Self.subscriberBuffer, limit: Self.subscriberLimit)
        let open = state.withLock { s -> Bool in
            guard s.transactions.closed == nil else { return false }
            s.subscribers[handle, default: []].append(queue)
            return true
        }
        if !open { queue.finish() }
        return NotificationValues(queue)
    }

    /// Every notification and indication of the link, whatever its handle, in the order they came:
    /// for drivers whose characteristics tell one story together.
    public func notifications() -> NotificationValues<ATTNotification> {
        let queue = NotificationQueue<ATTNotification>(capacity: Self.subscriberBuffer, limit: Self.subscriberLimit)
        let open = state.withLock { s -> Bool in
            guard s.transactions.closed == nil else { return false }
            s.everything.append(queue)
            return true
        }
        if !open { queue.finish() }
        return NotificationValues(queue)
    }

    /// Whether a subscriber is behind (its queue past the high-water mark): the host then calls
    /// `roomForSubscribers()` before it reads on.
    var subscribersCongested: Bool {
        state.withLock { s in s.subscribers.values.contains { $0.contains { $0.isCongested } } || s.everything.contains { $0.isCongested } }
    }

    /// Waits until every subscriber that is behind has caught up, for at most `congestionLimit`;
    /// those that did not are marked stalled (no more waits for them until they drain).
    func roomForSubscribers() async {
        let queues = state.withLock { s -> [any SubscriberQueue] in
            (s.subscribers.values.flatMap { $0 } as [any SubscriberQueue] + s.everything as [any SubscriberQueue]).filter(\.isCongested)
        }
        guard !queues.isEmpty else { return }
        let clock = clock
        // Each child says whether the limit passed: the wait's child never, the timer's when it
        // slept the whole limit (a cancelled sleep throws).
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for queue in queues { await queue.waitForRoom() }
                return false
            }
            group.addTask {
                (try? await clock.sleep(for: Self.congestionLimit)) != nil
            }
            let timedOut = await group.next() ?? false
            group.cancelAll()
            if timedOut {
                let trimmed = queues.filter(\.isCongested).reduce(0) { $0 + $1.markStalled() }
                state.withLock { $0.notificationsDropped += trimmed }
            }
        }
    }

    /// A PDU from the peer, handed over where it arrived (the host's receive path, or a fuzz
    /// target's stand-in peer).
    /// Returns whether a subscriber is now behind (see `roomForSubscribers()`).
    @_spi(Fuzzing) @discardableResult public func receive(_ bytes: [UInt8]) -> Bool {
        receive(CollectionOfOne(bytes))
    }

    /// PDUs that arrived together (one chunk from the controller), in order: each subscriber gets
    /// its share of the values in one hand-over, so it is resumed once however many came.
    /// Returns whether a subscriber is now behind (see `roomForSubscribers()`).
    @discardableResult
    func receive(_ pdus: some Collection<[UInt8]>) -> Bool {
        var answers: [(CheckedContinuation<ATTPDU, any Error>, Result<ATTPDU, BLEError>)] = []
        var mtuChanges: [UInt16] = []
        var values: [(queue: NotificationQueue<[UInt8]>, batch: [[UInt8]])] = []
        var everything: [ATTNotification] = []
        let (sends, everyQueue) = state.withLock { s -> ([ATTPDU], [NotificationQueue<ATTNotification>]) in
            var sends: [ATTPDU] = []
            for bytes in pdus {
                let sentBefore = s.transactions.requestsSent
                let (receipt, more) = s.transactions.receive(bytes)
                sends += more
                switch receipt {
                case .response(let id, let pdu):
                    if let waiter = s.waiters.removeValue(forKey: id) { answers.append((waiter, .success(pdu))) }
                case .failure(let id, let error):
                    if let waiter = s.waiters.removeValue(forKey: id) { answers.append((waiter, .failure(error))) }
                case .notification(let handle, let value), .indication(let handle, let value):
                    s.notificationsReceived += 1
                    let indicated = if case .indication = receipt { true } else { false }
                    for subscriber in s.subscribers[handle] ?? [] {
                        if let index = values.firstIndex(where: { $0.queue === subscriber }) {
                            values[index].batch.append(value)
                        } else {
                            values.append((subscriber, [value]))
                        }
                    }
                    if !s.everything.isEmpty { everything.append(ATTNotification(handle: handle, value: value, indicated: indicated)) }
                case .mtuChanged(let mtu):
                    mtuChanges.append(mtu)
                case .dropped:
                    break
                }
                // The outstanding request was answered, or the next one went out: its own timer.
                if s.transactions.outstanding == nil || s.transactions.requestsSent != sentBefore {
                    disarmTimer(in: &s)
                    if s.transactions.outstanding != nil { armTimer(in: &s) }
                }
            }
            return (sends, everything.isEmpty ? [] : s.everything)
        }
        // The queues have locks of their own: values are handed over outside the bearer's.
        var congested = false
        var dropped = 0
        for (queue, batch) in values {
            let pushed = queue.push(contentsOf: batch)
            dropped += pushed.dropped
            congested = congested || pushed.congested
        }
        for queue in everyQueue {
            let pushed = queue.push(contentsOf: everything)
            dropped += pushed.dropped
            congested = congested || pushed.congested
        }
        if dropped > 0 { state.withLock { $0.notificationsDropped += dropped } }
        for pdu in sends { outbox.yield(pdu.encoded) }
        for (waiter, result) in answers { waiter.resume(with: result.mapError { $0 as any Error }) }
        for mtu in mtuChanges { events?(.mtuExchanged(link: link, mtu: mtu)) }
        return congested
    }

    /// Fails everything outstanding and every later request with `error`.
    func close(_ error: BLEError) {
        let (waiters, lists) = state.withLock { s -> ([CheckedContinuation<ATTPDU, any Error>], ([NotificationQueue<[UInt8]>], [NotificationQueue<ATTNotification>])) in
            _ = s.transactions.close(error)
            disarmTimer(in: &s)
            let waiters = Array(s.waiters.values)
            s.waiters = [:]
            let subscribers = s.subscribers.values.flatMap { $0 }
            let everything = s.everything
            s.subscribers = [:]
            s.everything = []
            return (waiters, (subscribers, everything))
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        for subscriber in lists.0 { subscriber.finish() }
        for subscriber in lists.1 { subscriber.finish() }
        outbox.finish()
    }

    // MARK: cancellation and the transaction timer

    private func cancel(_ id: Int) {
        let waiter = state.withLock { s -> CheckedContinuation<ATTPDU, any Error>? in
            guard let waiter = s.waiters.removeValue(forKey: id) else {
                if s.unregistered.contains(id) { s.cancelledEarly.insert(id) }
                return nil
            }
            _ = s.transactions.cancel(id)
            return waiter
        }
        waiter?.resume(throwing: BLEError.cancelled)
    }

    private func armTimer(in s: inout State) {
        s.timerGeneration += 1
        let generation = s.timerGeneration
        let clock = clock
        let timeout = timeout
        let task = Task { [weak self] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            self?.timerFired(generation)
        }
        s.timer = (generation, task)
    }

    private func disarmTimer(in s: inout State) {
        s.timer?.task.cancel()
        s.timer = nil
    }

    private func timerFired(_ generation: Int) {
        let current = state.withLock { s -> BLEError? in
            guard s.timer?.generation == generation, let outstanding = s.transactions.outstanding else { return nil }
            return .attTimedOut(ATTClientTransactions.describe(outstanding.request))
        }
        if let current { close(current) }
    }
}

/// The sender's way back to the bearer that owns it, set once the bearer exists.
private final class ClosingHook: Sendable {
    private let hook = Mutex<(@Sendable (BLEError) -> Void)?>(nil)
    func set(_ action: @escaping @Sendable (BLEError) -> Void) { hook.withLock { $0 = action } }
    func fire(_ error: BLEError) { hook.withLock { $0 }?(error) }
}

/// A value the peer pushed, with the handle it belongs to.
public struct ATTNotification: Hashable, Sendable {
    /// The value handle of the characteristic that sent it.
    public var handle: UInt16
    /// The value as sent, at most ATT_MTU − 3 bytes.
    public var value: [UInt8]
    /// Whether it came as an indication (already confirmed by the bearer) rather than a
    /// notification: `relay` passes each on to the app the way the device sent it.
    public var indicated = false
}
