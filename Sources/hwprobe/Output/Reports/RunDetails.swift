/// What a command knows about its run beyond its exit code, for `--report` (issue 27, item 9):
/// what a run that passed measured (a weight, a scan's id), the device it found (its address
/// even when none was typed), and, for a run that ended in a failure it presented rather than
/// threw (the body scan's failure screen), the failure's kind and words, so a CI job reads
/// "mirrorError 6: the mirror's battery is too low" instead of "ended with exit code 1".
struct RunDetails: Sendable {
    var properties: [RunReport.Property] = []
    var failure: (kind: String, message: String)?

    /// Adds a property, replacing one of the same name (the address found over the one typed).
    mutating func set(_ name: String, _ value: String) {
        properties.removeAll { $0.name == name }
        properties.append(.init(name: name, value: value))
    }
}
