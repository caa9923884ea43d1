import HAL
import HALFakes
import Synchronization

/// Collects a connection's events as they arrive.
final class EventLog: Sendable {
    private let storage = Locked<[ScaleEvent]>([])
    private let task: Task<Void, Never>

    init(_ connection: any ScaleConnection) {
        let storage = storage
        task = Task {
            for await event in connection.events { storage.withLock { $0.append(event) } }
        }
    }

    var events: [ScaleEvent] { storage.withLock { $0 } }

    var scanStates: [MirrorScanState] {
        events.compactMap { if case .scanState(let s) = $0 { s.state } else { nil } }
    }

    var lastScale: ScaleStatus? {
        events.reversed().lazy.compactMap { if case .scale(let s) = $0 { s } else { nil } }.first
    }

    var lastAlignment: Alignment? {
        events.reversed().lazy.compactMap { if case .alignment(let a) = $0 { a } else { nil } }.first
    }

    var disconnection: DisconnectReason? {
        events.lazy.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first
    }
}

/// Moves the manual clock from deadline to deadline until `condition` holds; fails after `limit` steps.
@discardableResult
func drive(_ clock: ManualClock, limit: Int = 5_000, until condition: () -> Bool) async -> Bool {
    for _ in 0..<limit {
        if condition() { return true }
        for _ in 0..<8 { await Task.yield() }
        if condition() { return true }
        if !clock.advanceToNextDeadline() { await Task.yield() }
    }
    return condition()
}

