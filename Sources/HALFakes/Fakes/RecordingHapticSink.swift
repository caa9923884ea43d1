import HAL
import Synchronization

/// A sink that remembers every cue and when it was asked for, so a test can say
/// `sink.cues == [.lightImpact, .success]`. It can also be told to vanish after some cues.
public final class RecordingHapticSink<C: Clock>: HapticSink where C.Duration == Duration {
    public struct Entry: Sendable {
        public var cue: HapticCue
        public var at: C.Instant
    }

    public let name: String
    private let clock: C
    private let failAfter: Int?
    private let entries = Mutex<[Entry]>([])

    /// `failAfter`: the sink disappears once it has played this many cues.
    public init(name: String = "recorder", clock: C, failAfter: Int? = nil) {
        self.name = name
        self.clock = clock
        self.failAfter = failAfter
    }

    public var recorded: [Entry] { entries.withLock { $0 } }
    public var cues: [HapticCue] { recorded.map(\.cue) }

    public func play(_ cue: HapticCue) async throws(HapticError) {
        let now = clock.now
        let played = entries.withLock { list -> Bool in
            if let failAfter, list.count >= failAfter { return false }
            list.append(Entry(cue: cue, at: now))
            return true
        }
        if !played { throw .disappeared(name) }
    }
}
