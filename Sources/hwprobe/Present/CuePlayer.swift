import HAL

/// Plays a flow's haptic cues on a sink, one after another, without holding up the screens.
///
/// Cues are queued (the newest 64 kept) and played by one task of its own: a new cue cuts the one
/// still playing short, and starts only after that stop went out, so the sink never gets two
/// patterns interleaved. A sink that vanishes is reported once on the console; the flow goes on
/// without haptics. With no sink, cues are taken and dropped.
final class CuePlayer: Sendable {
    private let queue: AsyncStream<HapticCue>.Continuation
    private let player: Task<Void, Never>

    /// - Parameters:
    ///   - sink: the device to play on; nil drops every cue.
    ///   - console: where the first failure is reported.
    init(sink: (any HapticSink)?, console: Console) {
        let (stream, continuation) = AsyncStream.makeStream(of: HapticCue.self, bufferingPolicy: .bufferingNewest(64))
        queue = continuation
        let reported = Locked(false)
        player = Task {
            guard let sink else {
                for await _ in stream {}
                return
            }
            var playing: Task<Void, Never>?
            for await cue in stream {
                playing?.cancel()
                playing = Task { [previous = playing] in
                    await previous?.value
                    do { try await sink.play(cue) } catch {
                        if reported.withLock({ let first = !$0; $0 = true; return first }) {
                            console.diagnostic("hwprobe: \(error)")
                        }
                    }
                }
            }
            await playing?.value
            await sink.close()
        }
    }

    /// Queues `cue`; it cuts short the one playing when its turn comes.
    func play(_ cue: HapticCue) {
        queue.yield(cue)
    }

    /// Takes no more cues, waits for those queued to finish, then closes the sink.
    func finish() async {
        queue.finish()
        await player.value
    }
}
