import Foundation
import Testing

/// Plain-text snapshot files for the flow tests.
///
/// Each snapshot lives at `Tests/FlowsTests/Snapshots/<name>.txt`, found from this source file's
/// own path rather than through SwiftPM resources, so the files are edited, reviewed and diffed
/// like any other file in the tree. A stored file always ends with one newline.
///
/// Recording: when a file is missing, or when the environment has `RECORD_SNAPSHOTS=1`, the
/// file is (re)written and an issue is recorded saying so. A run that wrote snapshots therefore
/// always fails; run again without the variable to see the comparison pass.
enum SnapshotStore {
    /// `Tests/FlowsTests/Snapshots`, next to this file.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("Snapshots", isDirectory: true)

    /// Set `RECORD_SNAPSHOTS=1` to rewrite every snapshot the run reaches.
    static var isRecording: Bool {
        ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1"
    }

    /// The most diff lines shown for one mismatch; the rest are summarised.
    static let maxDiffLines = 24

    static func url(for name: String) -> URL {
        directory.appendingPathComponent(name + ".txt", isDirectory: false)
    }

    /// The text as stored: exactly one newline at the end.
    static func fileContents(for text: String) -> String {
        var body = Substring(text)
        while body.hasSuffix("\n") { body = body.dropLast() }
        return body + "\n"
    }

    static func write(_ contents: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: url, options: .atomic)
    }

    /// A short line diff: `-` for lines only in the stored file, `+` for lines only in the new
    /// text, each with its 1-based line number on its own side.
    static func lineDiff(stored: String, actual: String) -> String {
        let old = lines(of: stored)
        let new = lines(of: actual)
        let difference = new.difference(from: old)
        var rows: [(line: Int, order: Int, text: String)] = []
        for change in difference {
            switch change {
            case .remove(let offset, let element, _):
                rows.append((offset, 0, "-\(offset + 1): \(element)"))
            case .insert(let offset, let element, _):
                rows.append((offset, 1, "+\(offset + 1): \(element)"))
            }
        }
        rows.sort { ($0.line, $0.order) < ($1.line, $1.order) }
        var shown = rows.prefix(maxDiffLines).map(\.text)
        if rows.count > maxDiffLines { shown.append("… and \(rows.count - maxDiffLines) more changed lines") }
        return shown.joined(separator: "\n")
    }

    private static func lines(of text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}

/// Compares `text` with the stored snapshot `named` (a path under `Snapshots/` without `.txt`,
/// e.g. `bodyscan/countdown-3-w40`). Records the file when it is missing or when recording is
/// on, and records an issue in both cases; on a mismatch records an issue with a line diff.
func assertSnapshot(_ text: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let url = SnapshotStore.url(for: name)
    let contents = SnapshotStore.fileContents(for: text)
    let stored = try? String(contentsOf: url, encoding: .utf8)

    if stored == nil || SnapshotStore.isRecording {
        do {
            try SnapshotStore.write(contents, to: url)
        } catch {
            Issue.record("Could not write snapshot \(name).txt: \(error)", sourceLocation: sourceLocation)
            return
        }
        let what = switch stored {
        case nil: "Recorded new snapshot"
        case contents?: "Re-recorded snapshot (unchanged)"
        default: "Re-recorded snapshot (changed)"
        }
        Issue.record("""
            \(what) \(name).txt. Review it with `git diff Tests/FlowsTests/Snapshots`, \
            then run the tests again without RECORD_SNAPSHOTS to compare.
            """, sourceLocation: sourceLocation)
        return
    }

    guard let stored, stored != contents else { return }
    Issue.record("""
        Snapshot \(name).txt does not match (- stored, + now):
        \(SnapshotStore.lineDiff(stored: stored, actual: contents))
        If the change is intended, re-record with RECORD_SNAPSHOTS=1 (see README.md).
        """, sourceLocation: sourceLocation)
}
