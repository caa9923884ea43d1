import Capture
import Flows
import Foundation
import HAL
import MediaSupport

/// `decode-bench --video` (after the card videos) and `--guard`: the whole `hwprobe import` on
/// videos of a printed page of codes held in front of the camera (`PageVideo`: still, drifting,
/// shaken), where the codes stay in view in almost every frame, against the plain C zbar loop on
/// the same frames in the same run.
///
/// The page shows the first half of a backup's codes (page 1 of 2), so the import never completes
/// and every frame of the video goes through the pipeline: the figure is the steady cost of a page
/// in view, not of the first look at it. CPU per frame is the import process's, net of the same
/// process on a one-frame video (start-up and tear-down), divided by the frames it went through.
enum PageBench {
    struct Video {
        var name: String
        var path: String
        var frames: [GrayFrame]
        /// The codes the page shows.
        var shown: Set<String>
    }

    struct Row {
        var video: String
        var arrangement: String
        var cpuPerFrame: Double?
        var frames: Int
        var read: Int
        var shown: Int
        var failure: String?
        /// What the change gate made of the frames (in-process), for the gated arrangement.
        var looks: ChangeGate.Counts?
    }

    static let password = "page bench password"

    /// The backup: `codes` codes of one container, drawn once and kept with the videos.
    static func backupCodes(_ count: Int, seed: UInt64, directory: String) throws -> [String] {
        let file = "\(directory)/page-v\(PageVideo.version)-seed\(seed)-\(count)codes.txt"
        if let saved = try? String(contentsOfFile: file, encoding: .utf8) { return saved.split(separator: "\n").map(String.init) }
        let container = try VB1Container.write(plaintext: VideoBench.plaintext, password: password, parameters: ScryptParameters(logN: 10, r: 8, p: 1))
        let codes = try VB1Code.split(container: container.bytes, into: count).map(\.text)
        for motion in PageVideo.Motion.allCases { try? FileManager.default.removeItem(atPath: videoPath(motion, seed: seed, directory: directory, seconds: 10)) }
        try codes.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        return codes
    }

    static func videoPath(_ motion: PageVideo.Motion, seed: UInt64, directory: String, seconds: Int) -> String {
        "\(directory)/page-v\(PageVideo.version)-seed\(seed)-\(motion.rawValue)-720p20-\(seconds)s.y4m"
    }

    /// Draws (once) and reads the three page videos.
    static func videos(seed: UInt64, directory: String, seconds: Int, pageCodes: Int = 8) throws -> [Video] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let codes = try backupCodes(2 * pageCodes, seed: seed, directory: directory)
        let shown = Array(codes.prefix(pageCodes))
        return try PageVideo.Motion.allCases.map { motion in
            let path = videoPath(motion, seed: seed, directory: directory, seconds: seconds)
            let video = PageVideo(codes: shown, motion: motion, seconds: seconds, seed: seed)
            if !FileManager.default.fileExists(atPath: path) {
                FileHandle.standardError.write(Data("decode-bench: drawing \(video.frameCount) frames of \(path)\n".utf8))
                let partial = path + ".partial"
                let writer = try Y4MWriter(path: partial, width: video.width, height: video.height,
                                           frameRateNumerator: video.framesPerSecond, frameRateDenominator: 1, colorSpace: .mono)
                try video.render { try writer.write($0) }
                writer.close()
                try FileManager.default.moveItem(atPath: partial, toPath: path)
            }
            return Video(name: "page-\(motion.rawValue)", path: path, frames: try VideoBench.readAll(path), shown: Set(shown))
        }
    }

    /// A one-frame video of the desk: the import process's fixed cost.
    static func startupVideo(directory: String) throws -> String {
        let path = "\(directory)/page-v\(PageVideo.version)-startup-720p.y4m"
        if FileManager.default.fileExists(atPath: path) { return path }
        let writer = try Y4MWriter(path: path, width: 1280, height: 720, frameRateNumerator: 20, frameRateDenominator: 1, colorSpace: .mono)
        try writer.write(QRFixture.blank(width: 1280, height: 720))
        writer.close()
        return path
    }

    /// Each arrangement on each page video: the import's CPU per frame and what it read.
    static func measure(_ videos: [Video], arrangements: [String], hwprobe: String, directory: String) throws -> [Row] {
        let passwordFile = directory + "/page-password"
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        let startup = try startupVideo(directory: directory)
        var rows: [Row] = []
        for name in arrangements {
            let fixed = VideoBench.importRun(hwprobe, video: "file:\(startup)?pace=max", decoder: name, password: passwordFile, directory: directory)
            for video in videos {
                FileHandle.standardError.write(Data("decode-bench: \(video.name) \(name)\n".utf8))
                let run = VideoBench.importRun(hwprobe, video: "file:\(video.path)?pace=max", decoder: name, password: passwordFile, directory: directory)
                // The same decoder in this process, for what it reads.
                let decoder = try CodeDecoders.decoder(named: name)
                var read = Set<String>()
                for frame in video.frames {
                    for symbol in decoder.decode(frame) { read.insert(String(decoding: symbol.bytes, as: UTF8.self)) }
                }
                let perFrame = run.framesDecoded > 0 ? max(0, run.cpuSeconds - fixed.cpuSeconds) / Double(run.framesDecoded) : nil
                let wentThrough = run.framesDecoded >= video.frames.count - 1
                rows.append(Row(video: video.name, arrangement: name, cpuPerFrame: wentThrough ? perFrame : nil, frames: run.framesDecoded,
                                read: read.intersection(video.shown).count, shown: video.shown.count,
                                failure: wentThrough ? nil : (run.failure ?? "went through \(run.framesDecoded) of \(video.frames.count) frames"),
                                looks: (decoder as? ZXingThenZBarDecoder)?.gate?.counts))
            }
        }
        return rows
    }

    /// Prints the table and one `ratio qr.VIDEO.ARRANGEMENT X` line per row (CPU per frame over
    /// the C zbar loop's), the lines `scripts/bench-guard` compares with the committed figures.
    static func report(_ rows: [Row], cLoop: [String: Double]) {
        print("")
        print("A printed page of codes held in front of the camera (720p, 20 fps; the page shows half a backup, so every frame is decoded):")
        print("CPU per frame: the hwprobe import process net of its start-up; C loop: zbar_scan_image on every frame, this thread's CPU")
        let headers = ["video", "arrangement", "ms/frame", "C loop ms", "× C loop", "frames", "codes read (in-process)", "looks: whole/part/none"]
        var table: [[String]] = []
        for row in rows {
            let c = cLoop[row.video] ?? .nan
            table.append([row.video, row.arrangement,
                          row.cpuPerFrame.map { String(format: "%.2f", $0 * 1000) } ?? "– (\(row.failure ?? "?"))",
                          String(format: "%.2f", c * 1000),
                          row.cpuPerFrame.map { String(format: "%.3f", $0 / c) } ?? "–",
                          String(row.frames), "\(row.read)/\(row.shown)",
                          row.looks.map { "\($0.whole)/\($0.cropped)/\($0.skipped)" } ?? "–"])
        }
        let widths = headers.indices.map { column in ([headers] + table).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index < 2 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                          : String(repeating: " ", count: max(0, widths[index] - cell.count)) + cell
            }.joined(separator: "  ")
        }
        print(line(headers))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        table.forEach { print(line($0)) }
        for row in rows {
            if let perFrame = row.cpuPerFrame, let c = cLoop[row.video] {
                print(String(format: "ratio qr.%@.%@ %.4f", row.video, row.arrangement, perFrame / c))
            }
            print("read qr.\(row.video).\(row.arrangement) \(row.read) \(row.shown)")
        }
    }

    /// The page videos, measured and reported: `--video` calls it after the card videos.
    static func run(seed: UInt64, seconds: Int, hwprobe: String, directory: String, arrangements: [String]) throws {
        let videos = try videos(seed: seed, directory: directory, seconds: seconds)
        var cLoop: [String: Double] = [:]
        for video in videos { cLoop[video.name] = VideoBench.cLoopCPU(video.frames) }
        report(try measure(videos, arrangements: arrangements, hwprobe: hwprobe, directory: directory), cLoop: cLoop)
    }
}

/// `decode-bench --gate-trace FILE.y4m`: what the default arrangement's change gate planned for
/// each frame of a video, and how many tiles differed from what was last looked at (for tuning).
enum GateTrace {
    static func run(_ path: String) throws {
        let frames = try VideoBench.readAll(path)
        let gate = ChangeGate()
        let decoder = ZXingThenZBarDecoder(gate: gate)
        var reference: TileSignature?
        var texts: [String] = []
        for frame in frames {
            let signature = TileSignature(frame)
            let changed = signature.flatMap { s in reference.map { s.changed(since: $0).filter { $0 }.count } }
            let before = gate.counts
            let symbols = decoder.decode(frame)
            let read = symbols.count
            for symbol in symbols {
                let text = String(decoding: symbol.bytes, as: UTF8.self)
                if !texts.contains(text) {
                    texts.append(text)
                    print("frame \(frame.sequence): read new code #\(texts.count): \(text.prefix(24))")
                }
            }
            let after = gate.counts
            let plan = after.whole > before.whole ? "whole" : after.cropped > before.cropped ? "part" : "skip"
            if plan != "skip" { reference = signature }
            print("frame \(frame.sequence): \(plan), \(changed.map(String.init) ?? "-") tiles changed, \(read) codes")
        }
        // The same frames through the arrangement without the gate, for what the gate missed.
        let every = ZXingThenZBarDecoder()
        var everyTexts: [String] = []
        for frame in frames {
            for symbol in every.decode(frame) {
                let text = String(decoding: symbol.bytes, as: UTF8.self)
                if !everyTexts.contains(text) {
                    everyTexts.append(text)
                    print("every: frame \(frame.sequence): read new code #\(everyTexts.count): \(text.prefix(24))\(texts.contains(text) ? "" : "   (missed by the gate)")")
                }
            }
        }
    }
}
