/// The H4 bytes on their way to the host, in order, with a byte budget: the controller's
/// outgoing buffers. What may be dropped when they are full is the caller's decision (see
/// `ControllerCore.sendToHost`); this only counts and bounds.
struct HostQueue {
    private var packets: [[UInt8]] = []
    private var head = 0
    private(set) var bytes = 0

    var isEmpty: Bool { head == packets.count }
    var count: Int { packets.count - head }

    mutating func push(_ packet: [UInt8]) {
        packets.append(packet)
        bytes += packet.count
    }

    /// Whole packets, up to `limit` bytes (at least one), as one chunk, as a UART or socket would
    /// hand several packets to a reader at once.
    mutating func pop(upTo limit: Int) -> [UInt8]? {
        guard !isEmpty else { return nil }
        var chunk = packets[head]
        packets[head] = []
        head += 1
        while head < packets.count, chunk.count + packets[head].count <= limit {
            chunk += packets[head]
            packets[head] = []
            head += 1
        }
        bytes -= chunk.count
        if head > 1024, head * 2 > packets.count {
            packets.removeFirst(head)
            head = 0
        }
        return chunk
    }

    mutating func removeAll() {
        packets = []
        head = 0
        bytes = 0
    }
}
