/// The host's ACL data flow control (Core Vol 4 Part E §4.1.1), as a value: L2CAP PDUs are cut
/// into fragments the controller's LE buffers hold, queued per link, and sent in turn across
/// links while the controller has free buffers; Number Of Completed Packets frees them again.
///
/// Sans-IO: fed PDUs and completions, it returns the fragments to write. Every queue is bounded
/// (a full one refuses, it never grows), and credits never exceed the buffers the controller has.
@_spi(Fuzzing) public struct ACLScheduler: Sendable {
    /// Most bytes of a PDU one fragment carries: the controller's ACL data packet length (LE buffer if it has one).
    public let fragmentLength: Int
    /// How many ACL packets the controller can buffer at once; credits never rise above it.
    public let bufferCount: Int
    /// Buffers free in the controller now.
    public private(set) var credits: Int
    private var queues: [UInt16: LinkQueue] = [:]
    private var queuedBytes: [UInt16: Int] = [:]
    /// Links with something queued, in the order they get their next turn.
    private var turns: [UInt16] = []
    /// Fragments sent on each link and not yet reported complete.
    public private(set) var inFlight: [UInt16: Int] = [:]

    /// What one link may have waiting; a caller beyond it gets `.queueFull` and may try again.
    public static let maximumQueuedBytes = 64 * 1024

    /// Why a PDU was refused: the link was never opened here, or its queue is already at `maximumQueuedBytes`.
    public enum Failure: Error, Equatable {
        /// The handle names no link this scheduler knows (never opened, or closed).
        case unknownLink
        /// The link already has `maximumQueuedBytes` waiting: try again once some are sent.
        case queueFull
    }

    /// Starts with every controller buffer free; values below 1 are raised to 1 so the scheduler always makes progress.
    public init(fragmentLength: Int, bufferCount: Int) {
        self.fragmentLength = max(1, fragmentLength)
        self.bufferCount = max(1, bufferCount)
        credits = max(1, bufferCount)
    }

    /// Registers a new connection handle so PDUs may be queued on it; opening a link twice keeps its count.
    public mutating func open(_ handle: UInt16) {
        inFlight[handle] = inFlight[handle] ?? 0
    }

    /// The handles currently open, for the host to check a link is known before queuing on it.
    public var links: Set<UInt16> { Set(inFlight.keys) }

    /// Queues one L2CAP PDU (header included) on `handle`; returns the fragments to write now.
    public mutating func enqueue(_ handle: UInt16, pdu: [UInt8]) throws(Failure) -> [ACLPacket] {
        guard inFlight[handle] != nil else { throw .unknownLink }
        guard (queuedBytes[handle] ?? 0) + pdu.count <= Self.maximumQueuedBytes else { throw .queueFull }
        var fragments: [ACLPacket] = []
        var offset = 0
        repeat {
            let end = min(offset + fragmentLength, pdu.count)
            fragments.append(ACLPacket(handle: handle, boundary: offset == 0 ? .firstNonFlushable : .continuing,
                                       data: Array(pdu[offset..<end])))
            offset = end
        } while offset < pdu.count
        if queues[handle]?.isEmpty ?? true, !turns.contains(handle) { turns.append(handle) }
        queues[handle, default: LinkQueue()].append(fragments)
        queuedBytes[handle, default: 0] += pdu.count
        return drain()
    }

    /// Number Of Completed Packets for one link: credits back (never more than were in flight on
    /// it, nor more than the controller has buffers), then what may be written now.
    public mutating func completed(_ handle: UInt16, count: Int) -> [ACLPacket] {
        let returned = min(max(0, count), inFlight[handle] ?? 0)
        if returned > 0 {
            inFlight[handle, default: 0] -= returned
            credits = min(credits + returned, bufferCount)
        }
        return drain()
    }

    /// The link ended: its queue is dropped and the buffers it held are free again (the
    /// controller flushes them with the link).
    public mutating func close(_ handle: UInt16) -> [ACLPacket] {
        credits = min(credits + (inFlight.removeValue(forKey: handle) ?? 0), bufferCount)
        queues[handle] = nil
        queuedBytes[handle] = nil
        turns.removeAll { $0 == handle }
        return drain()
    }

    private mutating func drain() -> [ACLPacket] {
        var out: [ACLPacket] = []
        while credits > 0, let handle = turns.first {
            turns.removeFirst()
            // Taken in place: a link with thousands of fragments queued (a peripheral streaming
            // notifications) must not have its queue copied for each one sent.
            guard let fragment = queues[handle]?.pop() else {
                queues[handle] = nil
                continue
            }
            queuedBytes[handle, default: 0] -= fragment.data.count
            if queues[handle]?.isEmpty ?? true { queues[handle] = nil } else { turns.append(handle) }
            credits -= 1
            inFlight[handle, default: 0] += 1
            out.append(fragment)
        }
        return out
    }

    /// One link's fragments in order, taken from the front without moving the rest.
    private struct LinkQueue: Sendable {
        private var items: [ACLPacket] = []
        private var head = 0

        var isEmpty: Bool { head == items.count }

        mutating func append(_ fragments: [ACLPacket]) {
            items += fragments
        }

        mutating func pop() -> ACLPacket? {
            guard head < items.count else { return nil }
            let fragment = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 256, head * 2 >= items.count {
                // What was taken goes once it is half the storage: linear over the queue's life.
                items.removeFirst(head)
                head = 0
            }
            return fragment
        }
    }
}
