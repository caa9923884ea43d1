import HAL
import Synchronization

/// A sink that remembers every cue and when it was asked for, so a test can say
/// `sink.cues == [.lightImpact, .success]`. It can also be told to vanish after some cues.
public final class RecordingHapticSink<C: Clock>: HapticSink where C.Duration == Duration {
    /// One cue that was played and when.
    public struct Entry: Sendable {
        /// The cue asked for.
        public var cue: HapticCue
        /// The clock's time when `play` was called.
        public var at: C.Instant
    }

    /// The name the sink reports, and the device named in its `.disappeared` error.
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

    /// Every cue played so far with its time, in order; cues refused after vanishing are not here.
    public var recorded: [Entry] { entries.withLock { $0 } }
    /// Just the cues, for comparing with an expected list.
    public var cues: [HapticCue] { recorded.map(\.cue) }

    /// Records the cue and returns at once; after `failAfter` cues it throws `.disappeared` instead.
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
