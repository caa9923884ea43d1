/// Counts outcomes per fault and prints them as a table: runs × faults × outcomes.
struct OutcomeTable {
    private var cells: [String: [String: Int]] = [:]
    private var faultOrder: [String] = []
    private var outcomeOrder: [String] = []

    mutating func add(fault: String, outcome: String) {
        if cells[fault] == nil { faultOrder.append(fault) }
        if !outcomeOrder.contains(outcome) { outcomeOrder.append(outcome) }
        cells[fault, default: [:]][outcome, default: 0] += 1
    }

    func render(title: String) -> String {
        let outcomes = outcomeOrder.sorted()
        let faultWidth = max(title.count, faultOrder.map(\.count).max() ?? 0)
        let widths = outcomes.map { max($0.count, 4) }
        func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
            let space = String(repeating: " ", count: max(0, width - text.count))
            return right ? space + text : text + space
        }
        var lines = [pad(title, faultWidth) + "  " + zip(outcomes, widths).map { pad($0, $1, right: true) }.joined(separator: "  ") + "  runs"]
        for fault in faultOrder.sorted() {
            let row = cells[fault] ?? [:]
            let counts = zip(outcomes, widths).map { pad(row[$0].map(String.init) ?? "·", $1, right: true) }
            lines.append(pad(fault, faultWidth) + "  " + counts.joined(separator: "  ") + "  " + pad(String(row.values.reduce(0, +)), 4, right: true))
        }
        return lines.joined(separator: "\n")
    }
}
