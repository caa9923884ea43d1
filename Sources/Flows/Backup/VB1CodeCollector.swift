/// Gathers scanned VB1 codes until one backup's set is complete. A value type with no I/O: the
/// import flow feeds it code texts and turns each outcome into screen updates, haptics and speech.
///
/// The backup "shown" (`currentID`) is the first one a code was accepted for. Codes of other
/// backups are reported as `.otherBackup` and not counted on screen, but they are still kept,
/// each backup apart, so a stray code scanned first cannot lock out the real set: whichever set
/// completes first is the result. Contradictions inside another backup's set (its own duplicates,
/// conflicting data, another `n`, a failed ID check) are absorbed quietly and reported as
/// `.otherBackup` too; only the backup shown ever yields `.duplicate` or `.damaged`.
public struct VB1CodeCollector: Sendable {
    /// What one scanned text did to the collection, so the flow knows which screen, cue and words follow.
    public enum Outcome: Hashable, Sendable {
        /// A new part of the backup shown: part `index` of `count`.
        case accepted(Int, of: Int)
        /// This part was already scanned with the same data; nothing to do.
        case duplicate
        /// A set is complete and its joined container matches its ID.
        case completed([UInt8])
        /// The text is not a well-formed VB1 code; it is not counted.
        case notABackupCode(String)
        /// A code of a different backup than the one shown (kept aside, not counted on screen).
        case otherBackup(String)
        /// Codes of the backup shown contradict each other, or the joined set fails its ID check.
        case damaged(String)
    }

    /// How many different backups are tracked at once; the least recently seen other backup is
    /// forgotten beyond this, so a stream of unrelated codes cannot grow memory without bound.
    public static let maximumTrackedBackups = 8

    private struct PartSet: Sendable {
        var count: Int
        var parts: [Int: [UInt8]] = [:]
        var lastSeen: Int
    }

    private var sets: [String: PartSet] = [:]
    private var tick = 0

    /// ID of the backup shown, once a code has been accepted.
    public private(set) var currentID: String?
    /// The container of the set that completed, once one has.
    public private(set) var completedContainer: [UInt8]?

    /// An empty collector, before the first scan.
    public init() {}

    /// Number of codes in the backup shown.
    public var currentCount: Int? {
        currentID.flatMap { sets[$0]?.count }
    }

    /// Indexes (1-based) of the backup shown that have been scanned, for drawing its tiles.
    public var scannedIndexes: Set<Int> {
        guard let currentID, let set = sets[currentID] else { return [] }
        return Set(set.parts.keys)
    }

    /// Other backups that codes have been seen for, most recent first.
    public var otherBackupIDs: [String] {
        sets.filter { $0.key != currentID }.sorted { $0.value.lastSeen > $1.value.lastSeen }.map(\.key)
    }

    /// Makes another backup (one of `otherBackupIDs`) the one shown. Returns false if unknown.
    public mutating func switchTo(backupID: String) -> Bool {
        guard completedContainer == nil, sets[backupID] != nil else { return false }
        currentID = backupID
        return true
    }

    /// Forgets everything: start over.
    public mutating func reset() {
        self = VB1CodeCollector()
    }

    /// Takes one scanned text.
    public mutating func accept(_ text: String) -> Outcome {
        let code: VB1Code
        do throws(VB1CodeError) {
            code = try VB1Code(parsing: text)
        } catch {
            switch error {
            case .notABackupCode(let reason), .cannotSplit(let reason):
                return .notABackupCode(reason)
            }
        }
        return accept(code)
    }

    /// Takes one already parsed code.
    public mutating func accept(_ code: VB1Code) -> Outcome {
        if completedContainer != nil {
            // Finished: the completed set's own codes are duplicates, everything else is ignored.
            guard code.id == currentID else { return .otherBackup(code.id) }
            guard let set = sets[code.id], set.count == code.count, set.parts[code.index] == code.data else {
                return .damaged("this code contradicts the completed backup")
            }
            return .duplicate
        }

        tick += 1
        let isCurrent = currentID == nil || currentID == code.id
        if currentID == nil { currentID = code.id }

        var set: PartSet
        if let existing = sets[code.id] {
            set = existing
        } else {
            makeRoomForNewSet()
            set = PartSet(count: code.count, lastSeen: tick)
        }
        set.lastSeen = tick

        // Contradictions: another n for the same ID, or the same index with other data.
        if set.count != code.count {
            sets[code.id] = set
            return isCurrent
                ? .damaged("this code says the backup has \(code.count) codes; earlier ones said \(set.count)")
                : .otherBackup(code.id)
        }
        if let previous = set.parts[code.index] {
            sets[code.id] = set
            if previous == code.data {
                return isCurrent ? .duplicate : .otherBackup(code.id)
            }
            return isCurrent
                ? .damaged("code \(code.index) of \(code.count) was scanned before with different data")
                : .otherBackup(code.id)
        }

        set.parts[code.index] = code.data
        guard set.parts.count == set.count else {
            sets[code.id] = set
            return isCurrent ? .accepted(code.index, of: code.count) : .otherBackup(code.id)
        }

        // Complete: join in index order and check the ID.
        var container: [UInt8] = []
        for index in 1...set.count {
            container += set.parts[index] ?? []
        }
        if Self.matches(container: container, id: code.id) {
            sets[code.id] = set
            currentID = code.id
            completedContainer = container
            return .completed(container)
        }
        // The parts do not make the backup their ID names: drop them so they can be scanned again.
        set.parts = [:]
        sets[code.id] = set
        return isCurrent
            ? .damaged("the codes do not fit together (the joined backup does not match its ID)")
            : .otherBackup(code.id)
    }

    private static func matches(container: [UInt8], id: String) -> Bool {
        do throws(BackupCryptoError) {
            return try VB1Code.backupID(of: container) == id
        } catch {
            return false
        }
    }

    private mutating func makeRoomForNewSet() {
        while sets.count >= Self.maximumTrackedBackups {
            guard let oldest = sets
                .filter({ $0.key != currentID })
                .min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key
            else { return }
            sets[oldest] = nil
        }
    }
}
