import Foundation
import Synchronization
import Testing
@testable import hwprobe

/// The plaintext's way to disk against something that changes the path while it is written
/// (issue 15): the check and the publication must not be two steps someone can slip between.
///
/// A racer thread keeps putting something at the output path while the writer writes again and
/// again. The writer holds `turn` for each write, and the racer checks under it, so the racer
/// only ever judges the path between two writes: its own thing must still be where it put it.
/// No sleeps: each side runs flat out for a bounded number of rounds.
@Suite(.serialized) struct OutputFileRaceTests {
    /// Enough rounds that the old check-then-rename lost to the racer within a second or two on
    /// tmpfs (/dev/shm, where fsync costs nothing), and few enough to finish in seconds.
    static let rounds = 20_000

    struct Outcome {
        var written = 0
        var replacedTheRacersThing = 0
        var racerPlacements = 0
    }

    /// `place` puts the racer's thing, of file type `kind` (S_IFIFO, S_IFLNK), at the path
    /// (returns false if the path was taken).
    static func race(replacing: Bool, kind: mode_t, place: @escaping @Sendable (String) -> Bool) throws -> Outcome {
        let directory = "/dev/shm/hwprobe-race-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/vault.json"
        let turn = Mutex(())
        let stop = Atomic<Bool>(false)
        let replaced = Atomic<Int>(0)
        let placements = Atomic<Int>(0)
        let racer = Thread {
            var jitter = SystemRandomNumberGenerator()
            while !stop.load(ordering: .relaxed) {
                // A few microseconds of spinning, different each time, so the racer strikes at
                // every point of the writer's round, not just right after its own turn.
                for _ in 0..<Int.random(in: 0..<3000, using: &jitter) where stop.load(ordering: .relaxed) { break }
                guard place(path) else { continue }
                var placed = stat()
                // Placing and looking are two steps: with --force the writer may have swapped the
                // racer's thing out in between (and will swap it back), so what the racer sees
                // must be its own kind of thing for the round to count.
                guard lstat(path, &placed) == 0, placed.st_mode & S_IFMT == kind else { continue }
                placements.wrappingAdd(1, ordering: .relaxed)
                turn.withLock { _ in
                    // Between two writes: the racer's entry must be where it left it.
                    var now = stat()
                    if lstat(path, &now) != 0 || now.st_ino != placed.st_ino {
                        replaced.wrappingAdd(1, ordering: .relaxed)
                    } else {
                        unlink(path)
                    }
                }
            }
        }
        racer.start()
        var outcome = Outcome()
        let plaintext = Array("{\"secret\":1}".utf8)
        for _ in 0..<rounds {
            turn.withLock { _ in
                if (try? OutputTarget.write(plaintext, to: path, replacing: replacing)) != nil {
                    outcome.written += 1
                    // Our own file: take it away again so the racer has a free path.
                    var info = stat()
                    if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { unlink(path) }
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        while !racer.isFinished { sched_yield() }
        outcome.replacedTheRacersThing = replaced.load(ordering: .relaxed)
        outcome.racerPlacements = placements.load(ordering: .relaxed)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "vault.json" }
        #expect(left.isEmpty, "nothing but the output may be left in the directory: \(left)")
        return outcome
    }

    /// Without --force, a symbolic link that appears after the check is never replaced.
    @Test func aSymlinkThatAppearsMeanwhileIsNeverReplaced() throws {
        let outcome = try Self.race(replacing: false, kind: S_IFLNK) { path in symlink("/nonexistent/elsewhere", path) == 0 }
        #expect(outcome.written > 0 && outcome.racerPlacements > 0, "both sides got their turns")
        #expect(outcome.replacedTheRacersThing == 0, "a symlink put there meanwhile was replaced \(outcome.replacedTheRacersThing) times")
    }

    /// With --force, only a regular file is replaced: a FIFO (or a device) that appears after the
    /// check stays where it is.
    @Test func withForceAFIFOThatAppearsMeanwhileIsNeverReplaced() throws {
        let outcome = try Self.race(replacing: true, kind: S_IFIFO) { path in mkfifo(path, 0o600) == 0 }
        #expect(outcome.written > 0 && outcome.racerPlacements > 0, "both sides got their turns")
        #expect(outcome.replacedTheRacersThing == 0, "a FIFO put there meanwhile was replaced \(outcome.replacedTheRacersThing) times")
    }
}
