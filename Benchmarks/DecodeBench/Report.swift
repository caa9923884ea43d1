import Foundation

/// The benchmark's printed tables.
enum Report {
    static func print(frames: [BenchFrame], runs: [Run], zbarimg: ZBarImgRun?, options: Options) {
        let reference = runs[0]
        var rows = runs.map { (name: $0.name, nanoseconds: $0.nanoseconds, read: $0.read, wrong: $0.wrong) }
        if let zbarimg { rows.append((name: "zbarimg", nanoseconds: zbarimg.nanoseconds, read: zbarimg.read, wrong: zbarimg.wrong)) }
        let nameWidth = max(10, rows.map(\.name.count).max() ?? 0) + 4
        func indices(_ keep: (BenchFrame) -> Bool) -> [Int] { frames.indices.filter { keep(frames[$0]) } }

        Swift.print("decode-bench: \(frames.count) frames (\(options.perCondition) per condition and resolution, seed \(options.seed)), "
            + "each decoded once for the counts and \(options.repetitions) more times for the cost, on one thread")
        Swift.print("")
        Swift.print("per-frame decode cost, ms of CPU time: median / p90 (median's ratio to zbar's C loop)")
        Swift.print(padded("decoder", nameWidth) + Resolution.all.map { padded($0.description, 26) }.joined())
        for row in rows {
            var line = padded(row.name, nameWidth)
            for resolution in Resolution.all {
                let picked = indices { $0.resolution == resolution }
                let costs = picked.map { row.nanoseconds[$0] }
                let base = percentile(picked.map { reference.nanoseconds[$0] }, 0.5)
                let median = percentile(costs, 0.5)
                line += padded("\(milliseconds(median)) / \(milliseconds(percentile(costs, 0.9))) (×\(String(format: "%.2f", median / base)))", 26)
            }
            Swift.print(line)
        }

        Swift.print("")
        Swift.print("median cost by condition, ms")
        for resolution in Resolution.all {
            Swift.print(padded("  \(resolution)", nameWidth) + Condition.allCases.map { padded($0.rawValue, 10) }.joined())
            for row in rows {
                var line = padded("  \(row.name)", nameWidth)
                for condition in Condition.allCases {
                    let picked = indices { $0.resolution == resolution && $0.condition == condition }
                    line += padded(milliseconds(percentile(picked.map { row.nanoseconds[$0] }, 0.5)), 10)
                }
                Swift.print(line)
            }
        }

        Swift.print("")
        Swift.print("codes read exactly, of \(options.perCondition) per condition (empty: symbols wrongly reported)")
        Swift.print(padded("frames", 22) + rows.map { padded($0.name, max(9, $0.name.count + 2)) }.joined())
        for resolution in Resolution.all {
            for condition in Condition.allCases {
                let picked = indices { $0.resolution == resolution && $0.condition == condition }
                var line = padded("\(resolution) \(condition.rawValue)", 22)
                for row in rows {
                    let read = picked.filter { row.read[$0] }.count
                    let wrong = picked.map { row.wrong[$0] }.reduce(0, +)
                    let cell = condition == .empty ? "\(wrong)" : "\(read)" + (wrong > 0 ? " (\(wrong)✗)" : "")
                    line += padded(cell, max(9, row.name.count + 2))
                }
                Swift.print(line)
            }
        }
        var totals = padded("total", 22)
        for row in rows { totals += padded("\(row.read.filter { $0 }.count)", max(9, row.name.count + 2)) }
        Swift.print(totals)

        // Lost decodes: frames some single Swift decoder read that this one did not.
        let singles = runs.filter { $0.name == "zbar" || $0.name == "zxing" }
        guard !singles.isEmpty else { return }
        let union = frames.indices.map { index in singles.contains { $0.read[index] } }
        Swift.print("")
        Swift.print("codes read by zbar or zxing alone (\(union.filter { $0 }.count) in all) that each decoder missed")
        for run in runs.dropFirst() {
            let lost = frames.indices.filter { union[$0] && !run.read[$0] }
            Swift.print(padded("  \(run.name)", nameWidth) + "\(lost.count)" + (lost.isEmpty ? "" : ": " + lost.map { frames[$0].label }.joined(separator: " ")))
        }
    }
}
