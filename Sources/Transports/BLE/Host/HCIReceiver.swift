@_spi(Fuzzing) import BLEProtocol
import HAL
import Synchronization

/// The host's receive path, run where the controller's bytes arrive: on the link's reading thread
/// (or, for a stream without one, the task that takes its chunks).
///
/// Why: a notification used to cross three threads — the link's reader queued the chunk, the host
/// actor framed and parsed it, the subscriber took the value — three wake-ups for each arrival.
/// Here the chunk is framed (H4), reassembled (ACL), routed (L2CAP) and, on a link the host has
/// opened, handed to its ATT bearer in the same call, all of a chunk's PDUs for a bearer at once,
/// so a subscriber is resumed once per chunk however many values it brought. What needs the
/// host's own state — HCI events, LE signalling, the security manager, data for a link the host
/// has not finished opening — goes to the host actor through ``inbox``, in the order it came.
///
/// Bounds: the inbox holds at most `inboxBudget` bytes; past that, and while a subscriber is
/// behind (`ATTBearer.roomForSubscribers()`), ``receive(_:)`` asks the reading side to wait
/// before it reads on, so the kernel's flow control holds the controller back.
final class HCIReceiver: HCIChunkReceiver {
    /// What reaches the host actor, in stream order.
    enum Inbound: Sendable {
        /// An event, parsed where it arrived.
        case event(HCIEvent)
        /// A whole L2CAP PDU that is not ATT on an open link (or whose link is still being opened).
        case frame(handle: UInt16, L2CAPFrame)
        /// The stream ended, or lost sync; nothing follows.
        case ended(BLEError)
    }

    /// What the reading side alone touches (one chunk at a time); behind a lock only so the
    /// type is Sendable — it is never contended.
    private struct Parsing {
        var framer = H4Framer()
        var reassembler = ACLReassembler()
        var ended = false
        /// Bearers whose subscribers fell behind during the last chunk.
        var congested: [ATTBearer] = []
    }

    /// The links the host has opened, shared with the host actor.
    private struct Routes {
        var bearers: [UInt16: ATTBearer] = [:]
        /// Frames handed to the host for a link and not yet handled there: while any are, that
        /// link's ATT goes the same way, so nothing overtakes what came before it.
        var onHost: [UInt16: Int] = [:]
    }

    /// Bytes of events and frames the host has not taken before the reading side waits.
    static let inboxBudget = 256 * 1024

    let inbox: BoundedInbox<Inbound>
    private let parsing = Mutex(Parsing())
    private let routes = Mutex(Routes())
    private let snoop: BTSnoopWriter?
    private let tap: (any HCIPacketTap)?
    private let ignoredHere = Atomic<Int>(0)

    init(snoop: BTSnoopWriter?, tap: (any HCIPacketTap)?, inboxBudget: Int = HCIReceiver.inboxBudget) {
        self.snoop = snoop
        self.tap = tap
        inbox = BoundedInbox(budget: inboxBudget)
    }

    /// Packets dropped on the receive path: unparseable events, command or SCO/ISO packets from
    /// the controller, and fragments the reassembler threw away.
    var ignored: Int {
        ignoredHere.load(ordering: .relaxed) + parsing.withLock { $0.reassembler.dropped }
    }

    // MARK: routes (the host actor)

    /// From now on ATT on `handle` goes straight to `bearer`.
    func open(_ handle: UInt16, _ bearer: ATTBearer) {
        routes.withLock { $0.bearers[handle] = bearer }
    }

    /// The link ended: its data goes to the host (which drops it) until it is opened again.
    func close(_ handle: UInt16) {
        routes.withLock { $0.bearers[handle] = nil }
    }

    /// The host has handled a frame it was given for `handle`.
    func frameHandled(_ handle: UInt16) {
        routes.withLock { r in
            let left = (r.onHost[handle] ?? 1) - 1
            r.onHost[handle] = left > 0 ? left : nil
        }
    }

    // MARK: HCIChunkReceiver (the reading side)

    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var inboxFull = false
        let congested = parsing.withLock { p -> Bool in
            guard !p.ended else { return false }
            let packets: [HCIPacket]
            do {
                packets = try p.framer.feed(bytes)
            } catch {
                p.ended = true
                inbox.finish(with: .ended(.protocolError("\(error)")))
                return false
            }
            // A chunk's ATT PDUs for each bearer, delivered together after the chunk.
            var batches: [(bearer: ATTBearer, pdus: [[UInt8]])] = []
            for packet in packets {
                if let snoop { snoop.record(packet.h4Bytes, sentByHost: false) }
                tap?.record(packet, sentByHost: false)
                switch packet {
                case .event(let raw):
                    if raw.code == HCIEvent.Code.disconnectionComplete, raw.parameters.count >= 3, raw.parameters[0] == 0 {
                        // The link's PDU in progress can never be finished.
                        p.reassembler.forget(handle: (UInt16(raw.parameters[1]) | UInt16(raw.parameters[2]) << 8) & 0x0FFF)
                    }
                    guard let event = try? HCIEvent(parsing: raw) else {
                        ignoredHere.add(1, ordering: .relaxed)
                        continue
                    }
                    inboxFull = inbox.push(.event(event), weight: raw.parameters.count + 2) || inboxFull
                case .acl(let fragment):
                    guard let frame = p.reassembler.add(fragment) else { continue }
                    let handle = fragment.handle
                    let bearer = routes.withLock { r -> ATTBearer? in
                        if frame.channel == L2CAPFrame.att, r.onHost[handle] == nil, let bearer = r.bearers[handle] { return bearer }
                        r.onHost[handle, default: 0] += 1
                        return nil
                    }
                    if let bearer {
                        if let index = batches.firstIndex(where: { $0.bearer === bearer }) {
                            batches[index].pdus.append(frame.payload)
                        } else {
                            batches.append((bearer, [frame.payload]))
                        }
                    } else {
                        inboxFull = inbox.push(.frame(handle: handle, frame), weight: frame.payload.count + 4) || inboxFull
                    }
                case .command, .other:
                    ignoredHere.add(1, ordering: .relaxed)
                }
            }
            for batch in batches where batch.bearer.receive(batch.pdus) {
                if !p.congested.contains(where: { $0 === batch.bearer }) { p.congested.append(batch.bearer) }
            }
            return !p.congested.isEmpty
        }
        return congested || inboxFull
    }

    func waitForRoom() async {
        let bearers = parsing.withLock { p in
            defer { p.congested = [] }
            return p.congested
        }
        for bearer in bearers { await bearer.roomForSubscribers() }
        await inbox.waitForRoom()
    }

    func ended(_ failure: HCILinkError?) {
        parsing.withLock { $0.ended = true }
        inbox.finish(with: .ended(.transport(failure.map { "\($0)" } ?? "the controller closed the link")))
    }
}

/// A queue from the receive path to the host actor, bounded in bytes: past its budget the
/// producer is told so and can wait (``waitForRoom()``) until the consumer has taken it down to
/// half. One producer, one consumer; finishing lets the consumer take what is queued, then the end.
final class BoundedInbox<Element: Sendable>: Sendable {
    let budget: Int

    private struct State {
        var items: [(Element, Int)] = []
        var head = 0
        var weight = 0
        var finished = false
        var consumer: CheckedContinuation<Element?, Never>?
        var producer: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    init(budget: Int) {
        self.budget = max(1, budget)
    }

    /// Bytes queued and not yet taken.
    var weight: Int { state.withLock { $0.weight } }

    /// Queues `element` (handing it over at once when the consumer waits). Returns whether the
    /// queue is now past its budget.
    func push(_ element: Element, weight: Int) -> Bool {
        var full = false
        let consumer = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            guard !s.finished else { return nil }
            if let consumer = s.consumer {
                s.consumer = nil
                return consumer
            }
            s.items.append((element, weight))
            s.weight += weight
            full = s.weight >= budget
            return nil
        }
        consumer?.resume(returning: element)
        return full
    }

    /// Queues `last` (beyond the budget) and ends the queue; later pushes are dropped.
    func finish(with last: Element) {
        let (consumer, producer) = state.withLock { s -> (CheckedContinuation<Element?, Never>?, CheckedContinuation<Void, Never>?) in
            guard !s.finished else { return (nil, nil) }
            s.finished = true
            defer { s.producer = nil }
            if let consumer = s.consumer {
                s.consumer = nil
                return (consumer, s.producer)
            }
            s.items.append((last, 0))
            return (nil, s.producer)
        }
        consumer?.resume(returning: last)
        producer?.resume()
    }

    /// Returns once the queue is at most half its budget, it has ended, or the caller is cancelled.
    func waitForRoom() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if s.finished || s.weight <= budget / 2 || Task.isCancelled { return true }
                    s.producer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let producer = state.withLock { s in
                defer { s.producer = nil }
                return s.producer
            }
            producer?.resume()
        }
    }

    /// The next element, waiting for one; nil once finished and empty (or when cancelled).
    func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                var producer: CheckedContinuation<Void, Never>?
                let outcome = state.withLock { s -> Element?? in
                    if s.head < s.items.count {
                        let (element, weight) = s.items[s.head]
                        s.head += 1
                        s.weight -= weight
                        if s.head == s.items.count || s.head > 256 {
                            s.items.removeFirst(s.head)
                            s.head = 0
                        }
                        if s.weight <= budget / 2 {
                            producer = s.producer
                            s.producer = nil
                        }
                        return .some(element)
                    }
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
