/// "Did you mean …?" for words typed at the command line: the candidate closest to what was typed,
/// if it is close enough that the person most likely meant it.
enum DidYouMean {
    /// The best candidate, or nil when none is plausible. A word that starts exactly one candidate
    /// (`--scan` for `--scan-seconds`) is that candidate; otherwise the nearest by edit distance
    /// with swapped neighbours counting as one edit (`lsit` → `list`, `--jsno` → `--json`),
    /// allowing one edit for short words and two from six letters on. A tie is no answer: a
    /// guess between two candidates would mislead as often as help.
    static func suggestion(for typed: String, among candidates: [String]) -> String? {
        let word = typed.lowercased()
        guard !word.isEmpty, !candidates.contains(typed) else { return nil }
        let core = word.drop { $0 == "-" }.count
        let starting = candidates.filter { $0.lowercased().hasPrefix(word) }
        if core >= 2, starting.count == 1 { return starting[0] }
        let allowed = core >= 6 ? 2 : 1
        var best: (candidate: String, distance: Int, tied: Bool)?
        for candidate in candidates {
            let distance = Self.distance(word, candidate.lowercased())
            guard distance <= allowed, distance < candidate.drop(while: { $0 == "-" }).count else { continue }
            if let current = best, current.distance < distance { continue }
            if let current = best, current.distance == distance {
                best = (current.candidate, distance, true)
            } else {
                best = (candidate, distance, false)
            }
        }
        guard let best, !best.tied else { return nil }
        return best.candidate
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and transpositions
    /// of neighbours each cost one (the usual slips of fingers on a keyboard).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, table[i - 2][j - 2] + 1)
                }
                table[i][j] = value
            }
        }
        return table[a.count][b.count]
    }
}
