import Foundation
import HAL
import Synchronization
import Transports

/// The values one subscription received, kept within a bound: a peer may notify as fast as the
/// link goes for as long as it likes, and only what was asked for may cost memory. Kept packed
/// (one byte buffer, an end offset and a time per value: 12 bytes beside the value's own), since
/// an array per value cost a heap block each (issue 27, item 14).
struct SubscriptionRecord: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        /// Since the subscription was enabled, when hwprobe took the value in.
        var t: Duration
        var value: [UInt8]
    }

    /// With `--json` and no `--count`, at most this many values are kept (about 25 MB of values at
    /// the largest ATT MTU); `received` goes on counting past it.
    static let jsonCap = 100_000

    let keepLimit: Int
    private(set) var received = 0
    /// Values that came while hwprobe was still busy with earlier ones and were let go by the
    /// bearer's bounded buffer (`ATTBearer.notificationsDropped`); never printed nor counted in
    /// `received`.
    var dropped = 0
    /// The kept values' bytes, one after another; `ends[i]` is where value i ends.
    private var bytes: [UInt8] = []
    private var ends: [UInt32] = []
    /// When each kept value came, in microseconds since the subscription was enabled.
    private var micros: [Int64] = []

    init(keeping limit: Int) { keepLimit = max(0, limit) }

    /// How many values are kept.
    var keptCount: Int { ends.count }

    /// More arrived than were kept.
    var truncated: Bool { received > keptCount }

    /// Kept value `index`, with its time.
    func entry(_ index: Int) -> Entry {
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return Entry(t: .microseconds(micros[index]), value: Array(bytes[start..<Int(ends[index])]))
    }

    /// The kept values, in order (for tests and small records: each becomes an array of its own).
    var kept: [Entry] { (0..<keptCount).map(entry) }

    mutating func record(_ value: [UInt8], at t: Duration) {
        received += 1
        guard keptCount < keepLimit else { return }
        bytes.append(contentsOf: value)
        ends.append(UInt32(bytes.count))
        let (seconds, attoseconds) = t.components
        micros.append(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// Kept value `index`'s time in seconds (to the microsecond) and its hex, as the JSON has them.
    func jsonFields(_ index: Int) -> (t: String, hex: String) {
        let start = index == 0 ? 0 : Int(ends[index - 1])
        let us = micros[index]
        let fraction = String(us % 1_000_000)
        let t = "\(us / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
        return (t, HexValue.text(Array(bytes[start..<Int(ends[index])])))
    }
}

/// Why a subscription stopped. All but a lost link are the person's (or the script's) own limits.
enum SubscriptionEnding: Sendable, Equatable {
    case count
    case seconds
    /// Ctrl-C (SIGINT) or another interrupting signal, by number.
    case interrupted(Int32)
    case linkLost
}

/// `gatt --subscribe`: turns values on, takes them in until a limit, Ctrl-C or the link's end,
/// prints each as it arrives (text) or keeps it for the JSON, and turns them off again.
struct GattSubscriber: Sendable {
    var console: Console
    var json: Bool

    /// Turning values off on the way out is a courtesy to the device; it may not hold the exit up.
    static let unsubscribeGrace: Duration = .seconds(2)
    /// How often the status line (on a terminal) says how many values have come and how long is left.
    static let statusInterval: Duration = .milliseconds(250)

    func run(_ c: GATTCharacteristic, on connection: BLEConnection, count: Int?, seconds: Double?)
        async throws(CLIFailure) -> (record: SubscriptionRecord, ending: SubscriptionEnding) {
        let seconds = Self.timeLimit(count: count, seconds: seconds, json: json)
        let kind = c.properties.contains(.notify) ? "notifications" : "indications"
        let stream: NotificationValues<[UInt8]>
        let droppedBefore = connection.bearer.notificationsDropped
        do {
            stream = try await connection.gatt.subscribe(c)
        } catch .att(let failure) {
            throw GattText.refused(failure, "--subscribe \(GattText.label(c)): turning \(kind) on")
        } catch {
            throw CLIFailure(error)
        }

        let clock = ContinuousClock()
        let enabled = clock.now
        let progress = Progress(source: "\(kind) from \(GattText.short(c))", count: count, seconds: seconds, start: enabled)
        let stop = StopReason()
        let console = console
        let printsLines = !json
        // On a terminal the status line shares the screen with the value lines: each line clears
        // it, and the next tick draws it again under the line.
        let sharesTerminal = console.isTerminal && console.errIsTerminal
        let handle = c.valueHandle
        let keep = Self.keepLimit(count: count, json: json)
        let consumer = Task { () -> (SubscriptionRecord, Bool) in
            var record = SubscriptionRecord(keeping: keep)
            for await value in stream {
                let t = enabled.duration(to: clock.now)
                record.record(value, at: t)
                progress.received = record.received
                if printsLines {
                    if sharesTerminal { console.status(nil) }
                    console.out(Self.line(t, handle: handle, value: value))
                }
                if let count, record.received >= count { return (record, true) }
            }
            return (record, false)
        }
        let interrupt = SignalHandling.shared.onInterrupt {
            stop.set(.interrupted(SignalHandling.shared.interruption ?? SIGINT))
            consumer.cancel()
        }
        let deadline = seconds.map { seconds in
            Task {
                guard (try? await clock.sleep(until: enabled.advanced(by: .milliseconds(Int64(seconds * 1000))))) != nil else { return }
                stop.set(.seconds)
                consumer.cancel()
            }
        }
        let ticker: Task<Void, Never>?
        if console.errIsTerminal {
            ticker = Task {
                while !Task.isCancelled {
                    console.status(progress.line(now: clock.now))
                    try? await clock.sleep(for: Self.statusInterval)
                }
            }
        } else {
            // A log or a pipe gets the wait said once, with its limits.
            ticker = nil
            console.status(progress.onceLine)
        }

        var (record, reachedCount) = await consumer.value
        record.dropped = connection.bearer.notificationsDropped - droppedBefore
        interrupt.end()
        deadline?.cancel()
        ticker?.cancel()
        await ticker?.value
        console.status(nil)
        let ending: SubscriptionEnding = reachedCount ? .count : (stop.value ?? .linkLost)
        if case .interrupted = ending, console.errIsTerminal {
            // The terminal echoed ^C where the cursor stood: the summary takes that line.
            console.errControl("\r\u{1B}[2K")
        }

        if ending != .linkLost {
            await Self.within(Self.unsubscribeGrace) { try? await connection.gatt.unsubscribe(c) }
        }
        console.diagnostic(Self.summary(record, kind: kind, ending: ending, took: enabled.duration(to: clock.now),
                                        count: count, seconds: seconds))
        if record.dropped > 0 {
            console.diagnostic("\(record.dropped) more \(kind) were let go: hwprobe's output fell more than "
                               + "\(Int(ATTBearer.congestionLimit.components.seconds)) s behind the device, so it kept the newest "
                               + "\(ATTBearer.subscriberBuffer) and read on; write the values to a file, or use --json, to keep up")
        }
        if record.truncated, json {
            console.diagnostic("kept the first \(record.kept.count) of \(record.received) values for the JSON "
                               + "(the most it keeps without --count); give --count N to keep N")
        }
        return (record, ending)
    }

    /// The contract: with `--json` and neither limit, 10 s (a script must get its object);
    /// otherwise only what was asked (text without limits runs until Ctrl-C).
    static func timeLimit(count: Int?, seconds: Double?, json: Bool) -> Double? {
        seconds ?? (json && count == nil ? 10 : nil)
    }

    /// How many values to keep for the output: none for text (each is printed as it comes), what
    /// `--count` asked for, else `SubscriptionRecord.jsonCap`.
    static func keepLimit(count: Int?, json: Bool) -> Int {
        json ? (count ?? SubscriptionRecord.jsonCap) : 0
    }

    /// `SECONDS  HANDLE  HEX`, one line per value (docs/cli.md, "`gatt` values").
    static func line(_ t: Duration, handle: UInt16, value: [UInt8]) -> String {
        String(format: "%.3f", seconds(t)) + "  \(handle)  " + HexValue.text(value) + "\n"
    }

    static func seconds(_ t: Duration) -> Double {
        t.inSeconds
    }

    static func summary(_ record: SubscriptionRecord, kind: String, ending: SubscriptionEnding, took: Duration,
                        count: Int?, seconds: Double?) -> String {
        let received = "received \(record.received) \(record.received == 1 ? String(kind.dropLast()) : kind) in "
            + String(format: "%.1f", Self.seconds(took)) + " s"
        switch ending {
        case .count: return received + " (--count \(count ?? record.received))"
        case .seconds: return received + " (" + (seconds.map { "--seconds \(Self.trimmed($0))" } ?? "the time limit") + ")"
        case .interrupted(let signal): return received + (signal == SIGINT ? " (Ctrl-C)" : " (signal \(signal))")
        case .linkLost: return received + " before the link ended"
        }
    }

    private static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Waits for `operation` at most `limit`; past it the operation is left to finish (or fail,
    /// once the link closes) on its own.
    static func within(_ limit: Duration, _ operation: @escaping @Sendable () async -> Void) async {
        let done = AsyncStream<Void>.makeStream()
        let work = Task {
            await operation()
            done.continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            done.continuation.finish()
        }
        for await _ in done.stream {}
        timer.cancel()
        _ = work
    }

    /// The first reason to stop wins (the deadline and Ctrl-C can meet).
    private final class StopReason: Sendable {
        private let reason = Mutex<SubscriptionEnding?>(nil)
        func set(_ ending: SubscriptionEnding) { reason.withLock { if $0 == nil { $0 = ending } } }
        var value: SubscriptionEnding? { reason.withLock { $0 } }
    }

    /// What the status line says while values come in.
    private final class Progress: Sendable {
        let source: String
        let count: Int?
        let seconds: Double?
        let start: ContinuousClock.Instant
        private let receivedSoFar = Mutex(0)

        init(source: String, count: Int?, seconds: Double?, start: ContinuousClock.Instant) {
            self.source = source
            self.count = count
            self.seconds = seconds
            self.start = start
        }

        var received: Int {
            get { receivedSoFar.withLock { $0 } }
            set { receivedSoFar.withLock { $0 = newValue } }
        }

        /// `receiving notifications from scanState (handle 22): 12 of 20000, 8 s left · Ctrl-C stops`
        func line(now: ContinuousClock.Instant) -> String {
            var line = "receiving \(source): \(received)" + (count.map { " of \($0)" } ?? "")
            if let seconds {
                let left = max(0, seconds - GattSubscriber.seconds(start.duration(to: now)))
                line += ", \(Int(left.rounded(.up))) s left"
            }
            return line + " · Ctrl-C stops"
        }

        var onceLine: String {
            var limits: [String] = []
            if let count { limits.append("\(count) values") }
            if let seconds { limits.append("\(GattSubscriber.trimmed(seconds)) s") }
            return "receiving \(source)" + (limits.isEmpty ? "" : " until " + limits.joined(separator: " or ")) + " (Ctrl-C stops)"
        }
    }
}
