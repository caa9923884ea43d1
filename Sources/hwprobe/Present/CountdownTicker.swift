import HAL
import Synchronization

/// Counts down what a flow waits for, once a second on the flow's clock (docs/cli.md: any wait
/// over a second says so), as the status line's words.
///
/// Each countdown has a generation: starting another or stopping ends the one before, and a tick
/// of an older one that is already past its cancellation check can never write over what replaced
/// it, because the line is handed over together with a check that it is still current.
final class CountdownTicker: Sendable {
    /// Shows a status line (nil: none), if `stillCurrent()` holds when it is written.
    typealias Show = @Sendable (_ line: String?, _ stillCurrent: @escaping @Sendable () -> Bool) -> Void

    /// The flows' clock; without one, nothing counts down.
    private let clock: (any Clock<Duration>)?
    private let current = Mutex<(generation: Int, task: Task<Void, Never>?)>((0, nil))

    init(clock: (any Clock<Duration>)?) {
        self.clock = clock
    }

    /// Ends the countdown under way and starts one for `what` from `limit` down (nil, or no
    /// clock: the status line is cleared instead).
    func count(_ what: String?, limit: Duration, show: @escaping Show) {
        let generation = current.withLock { current -> Int in
            current.task?.cancel()
            current.generation += 1
            current.task = nil
            return current.generation
        }
        guard let what, let clock else {
            tick(generation, nil, show)
            return
        }
        let task = Task { [weak self] in
            var left = limit
            while left > .zero, !Task.isCancelled {
                let seconds = Int(left.inSeconds.rounded(.up))
                self?.tick(generation, "waiting for \(what): \(seconds) s left", show)
                let step = min(left, .seconds(1))
                guard (try? await clock.sleep(for: step)) != nil else { return }
                left -= step
            }
        }
        current.withLock { current in
            if current.generation == generation { current.task = task } else { task.cancel() }
        }
    }

    /// Ends the countdown under way; its ticks show nothing more.
    func stop() {
        current.withLock { current in
            current.generation += 1
            current.task?.cancel()
        }
    }

    private func isCurrent(_ generation: Int) -> Bool {
        current.withLock { $0.generation == generation }
    }

    private func tick(_ generation: Int, _ line: String?, _ show: Show) {
        guard isCurrent(generation) else { return }
        show(line) { [weak self] in self?.isCurrent(generation) ?? false }
    }
}
