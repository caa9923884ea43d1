/// The host's side of HCI command flow control (Core Vol 4 Part E §4.4), as a value: commands
/// wait for the controller's credits (Num_HCI_Command_Packets of each Command Complete or
/// Command Status), are sent in order, and are matched to their answers by opcode.
///
/// Sans-IO: the host feeds it submissions, answers, timeouts and cancellations, and writes what
/// it hands back. A cancelled command that was already sent stays "in the air" until the
/// controller answers it (its answer carries the credit), but nobody waits for it any more.
@_spi(Fuzzing) public struct HCICommandFlow: Sendable {
    /// Commands the host may send now: the controller's last word on it.
    public private(set) var credits = 1
    /// The most credits the controller ever granted, for the invariant credits ≤ granted.
    public private(set) var mostGranted = 1
    /// `id` nil: a command nobody waits for (a reply to the controller), sent all the same.
    private var waiting: [(id: Int?, command: HCICommand)] = []
    /// Sent and not yet answered; `id` nil once nobody waits for the answer.
    private var sent: [(id: Int?, opcode: UInt16)] = []

    /// Starts with one credit: the host may send one command before the controller grants more (Vol 4 Part E §4.4).
    public init() {}

    /// More waiting than this is a host bug or a runaway caller, not a queue to grow.
    public static let maximumWaiting = 128

    /// `submit` refuses once `maximumWaiting` commands are queued, so a runaway caller cannot grow memory.
    public enum Failure: Error, Equatable {
        /// `maximumWaiting` commands are already queued.
        case queueFull
    }

    /// Commands queued behind the credits and not yet written.
    public var waitingCount: Int { waiting.count }
    /// Commands written and not yet answered, including abandoned ones whose answer will still carry a credit.
    public var inFlightCount: Int { sent.count }

    /// Queues `command` for `id` (nil when nobody waits for its answer); returns what may be
    /// written now, in order.
    public mutating func submit(_ id: Int?, _ command: HCICommand) throws(Failure) -> [HCICommand] {
        guard waiting.count < Self.maximumWaiting else { throw .queueFull }
        waiting.append((id, command))
        return drain()
    }

    /// A Command Complete or Command Status: which waiter it answers (nil for a NOP, an
    /// abandoned command, or an opcode we never sent) and what may be written now.
    public mutating func answered(opcode: UInt16, credits granted: UInt8) -> (id: Int?, send: [HCICommand]) {
        credits = Int(granted)
        mostGranted = max(mostGranted, credits)
        var id: Int?
        if opcode != 0, let index = sent.firstIndex(where: { $0.opcode == opcode }) {
            id = sent.remove(at: index).id
        }
        return (id, drain())
    }

    /// Nobody waits for `id` any more (cancelled). Returns whether it was still unanswered.
    public mutating func abandon(_ id: Int) -> Bool {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            // Not sent yet: it never will be.
            waiting.remove(at: index)
            return true
        }
        if let index = sent.firstIndex(where: { $0.id == id }) {
            sent[index].id = nil
            return true
        }
        return false
    }

    /// `id` got no answer in time. A controller that swallowed a command also swallowed its
    /// credit; without taking one back the queue would stall behind an answer that never comes.
    public mutating func expire(_ id: Int) -> (wasPending: Bool, send: [HCICommand]) {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index)
            return (true, [])
        }
        guard let index = sent.firstIndex(where: { $0.id == id }) else { return (false, []) }
        sent.remove(at: index)
        if credits == 0 { credits = 1 }
        return (true, drain())
    }

    /// The link is gone: every id still waiting or in the air, for failing them.
    public mutating func failAll() -> [Int] {
        let ids = waiting.compactMap(\.id) + sent.compactMap(\.id)
        waiting = []
        sent = []
        return ids
    }

    private mutating func drain() -> [HCICommand] {
        var out: [HCICommand] = []
        while credits > 0, !waiting.isEmpty {
            let next = waiting.removeFirst()
            credits -= 1
            sent.append((next.id, next.command.opcode))
            out.append(next.command)
        }
        return out
    }
}
