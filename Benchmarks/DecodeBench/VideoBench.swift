import Capture
import Flows
import Foundation
import HAL
import MediaSupport

/// `decode-bench --video`: the decoder arrangements in the whole pipeline a person runs, on
/// camera-like videos of a printed backup (`CameraVideo`), against the plain C zbar loop on the
/// same frames in the same run.
///
/// Per video and arrangement:
/// - the real `hwprobe import -v --camera file:VIDEO?pace=max` process (every frame decoded, in
///   order): its CPU time (from the kernel's accounting of the reaped child) per frame it went
///   through, net of a run on a video of the bare codes (process start, key derivation, writing);
///   the frames it needed to complete the set, from its `-v` account;
/// - the same decoder in this process on every frame: which of the shown codes it reads at all;
/// - at the video's own pace (`file:VIDEO`, 720p only unless `--paced-all`): the decode latency's
///   p99 and the frames skipped while the decoder was behind, from the same `-v` account.
/// - at a terminal (720p, the default arrangement, paced): the same import in a 120×36
///   pseudo-terminal (`script`), with the camera preview drawn and with `--no-preview`, for what
///   the preview costs and whether decoding notices it.
/// The C loop is zbar_scan_image on each frame once (CPU of this thread).
enum VideoBench {
    struct Spec {
        var width: Int
        var height: Int
        var fps: Int
        var name: String { "\(width)x\(height)@\(fps)" }
    }

    static let specs = [Spec(width: 640, height: 480, fps: 15), Spec(width: 1280, height: 720, fps: 30),
                        Spec(width: 1920, height: 1080, fps: 20)]
    static let password = "video bench password"
    static let plaintext = Array(#"{"items":[{"issuer":"DecodeBench","account":"video@example.org","secret":"JBSWY3DPEHPK3PXP"}]}"#.utf8)
    static let bareFramesPerCode = 10
    static let strays = ["https://example.com/menu", "WIFI:S:bench;T:WPA;P:not-a-backup;;"]

    struct ProcessRun {
        var cpuSeconds: Double
        var framesDecoded: Int
        var completed: Bool
        var p99Milliseconds: Double?
        var p50Milliseconds: Double? = nil
        var secondMaxMilliseconds: Double?
        var skipped: Int
        var failure: String?
    }

    struct Row {
        var arrangement: String
        var full: ProcessRun
        var net: Double?
        var inProcessCPU: Double
        var readAlone: Set<String>
        /// The hard showings (far, faint, glare) during which this decoder alone read the code shown.
        var hardRead: Set<Int> = []
        var paced: ProcessRun?
    }

    /// `quick` (the CI guard): the 720p video only, no paced or terminal runs.
    static func run(seed: UInt64, codes codeCount: Int, hwprobe: String, directory: String, pacedAll: Bool,
                    arrangements: [String], quick: Bool = false, pacedRuns: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The backup is drawn once with its videos: a new container (fresh salt and nonce) would
        // not be the one the cached videos show.
        let codesFile = "\(directory)/v\(CameraVideo.version)-seed\(seed)-\(codeCount)codes.txt"
        let codes: [String]
        if let saved = try? String(contentsOfFile: codesFile, encoding: .utf8) {
            codes = saved.split(separator: "\n").map(String.init)
        } else {
            let container = try VB1Container.write(plaintext: plaintext, password: password, parameters: ScryptParameters(logN: 10, r: 8, p: 1))
            codes = try VB1Code.split(container: container.bytes, into: codeCount).map(\.text)
            for spec in specs {
                try? FileManager.default.removeItem(atPath: "\(directory)/v\(CameraVideo.version)-seed\(seed)-\(codeCount)codes-\(spec.name).y4m")
                try? FileManager.default.removeItem(atPath: "\(directory)/v\(CameraVideo.version)-seed\(seed)-\(codeCount)codes-\(spec.width)x\(spec.height)-bare\(bareFramesPerCode).y4m")
            }
            try codes.joined(separator: "\n").write(toFile: codesFile, atomically: true, encoding: .utf8)
        }
        let passwordFile = directory + "/password"
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        print("")
        print("Decoding in the whole pipeline: camera-like videos of a \(codeCount)-code backup (seed \(seed)), "
              + "\(strays.count) stray codes, shown in a shuffled order with repeats")
        print("CPU per frame: the hwprobe import process (reading, conversion, regions, decoding) per frame it went through,")
        print("net of a run on the bare codes; C loop: zbar_scan_image on every frame, this thread's CPU")
        for spec in specs where !quick || spec.height == 720 {
            let video = CameraVideo(codes: codes, strays: strays, width: spec.width, height: spec.height,
                                    framesPerSecond: spec.fps, seed: seed)
            let path = "\(directory)/v\(CameraVideo.version)-seed\(seed)-\(codeCount)codes-\(spec.name).y4m"
            let bare = "\(directory)/v\(CameraVideo.version)-seed\(seed)-\(codeCount)codes-\(spec.width)x\(spec.height)-bare\(bareFramesPerCode).y4m"
            try write(video, to: path)
            try writeBare(codes, spec: spec, to: bare)

            // The references, in this process on every frame.
            let frames = try readAll(path)
            let cLoop = cLoopCPU(frames)
            var rows: [Row] = []
            for name in arrangements {
                FileHandle.standardError.write(Data("decode-bench: \(spec.name) \(name)\n".utf8))
                let decoder = try CodeDecoders.decoder(named: name)
                var readAlone = Set<String>()
                var hardRead = Set<Int>()
                let shotOf = video.shotOfEachFrame
                let start = threadCPUNanoseconds()
                for (index, frame) in frames.enumerated() {
                    for symbol in decoder.decode(frame) {
                        let text = String(decoding: symbol.bytes, as: UTF8.self)
                        readAlone.insert(text)
                        if index < shotOf.count, case let shot = video.shots[shotOf[index]], shot.difficulty != .plain, shot.text == text {
                            hardRead.insert(shotOf[index])
                        }
                    }
                }
                let inProcess = Double(threadCPUNanoseconds() - start) / 1e9 / Double(max(1, frames.count))
                let full = importRun(hwprobe, video: "file:\(path)?pace=max", decoder: name, password: passwordFile, directory: directory)
                let base = importRun(hwprobe, video: "file:\(bare)?pace=max", decoder: name, password: passwordFile, directory: directory)
                var net: Double?
                if full.completed, base.completed, full.framesDecoded > base.framesDecoded {
                    net = max(0, full.cpuSeconds - base.cpuSeconds) / Double(full.framesDecoded - base.framesDecoded)
                }
                let paced = pacedRuns && (pacedAll || spec.height == 720)
                    ? importRun(hwprobe, video: "file:\(path)", decoder: name, password: passwordFile, directory: directory) : nil
                rows.append(Row(arrangement: name, full: full, net: net, inProcessCPU: inProcess, readAlone: readAlone, hardRead: hardRead,
                                paced: paced))
            }
            report(spec: spec, video: video, frames: frames.count, cLoop: cLoop, rows: rows, codes: codes)
            if pacedRuns, spec.height == 720, arrangements.contains(CodeDecoders.defaultName) {
                FileHandle.standardError.write(Data("decode-bench: \(spec.name) at a terminal, with and without the preview\n".utf8))
                let name = CodeDecoders.defaultName
                let shown = importRun(hwprobe, video: "file:\(path)", decoder: name, password: passwordFile, directory: directory, terminal: true)
                let hidden = importRun(hwprobe, video: "file:\(path)", decoder: name, password: passwordFile, directory: directory, terminal: true,
                                       extra: ["--no-preview"])
                reportTerminal(name: name, video: video, shown: shown, hidden: hidden)
            }
        }
    }

    static func write(_ video: CameraVideo, to path: String) throws {
        if FileManager.default.fileExists(atPath: path) { return }
        FileHandle.standardError.write(Data("decode-bench: drawing \(video.frameCount) frames of \(path)\n".utf8))
        let partial = path + ".partial"
        let writer = try Y4MWriter(path: partial, width: video.width, height: video.height, frameRateNumerator: video.framesPerSecond,
                                   frameRateDenominator: 1, colorSpace: .mono)
        try video.render { frame in try writer.write(frame) }
        writer.close()
        try FileManager.default.moveItem(atPath: partial, toPath: path)
    }

    /// Each code flat and sharp for `bareFramesPerCode` frames: the baseline run's video (what the
    /// process costs besides frames). Held for a few frames, as a screen shows each code: the
    /// default arrangement may take up to its verify interval to notice the next code of a backup
    /// in the same place.
    static func writeBare(_ codes: [String], spec: Spec, to path: String) throws {
        if FileManager.default.fileExists(atPath: path) { return }
        let writer = try Y4MWriter(path: path, width: spec.width, height: spec.height, frameRateNumerator: spec.fps,
                                   frameRateDenominator: 1, colorSpace: .mono)
        var sequence: UInt64 = 0
        for text in codes {
            let frame = try QRFixture.frame(text, width: spec.width, height: spec.height, scale: max(3, spec.height / 120))
            for _ in 0..<bareFramesPerCode {
                var next = frame
                next.sequence = sequence
                try writer.write(next)
                sequence += 1
            }
        }
        writer.close()
    }

    static func readAll(_ path: String) throws -> [GrayFrame] {
        let reader = try Y4MReader(path: path)
        defer { reader.close() }
        var frames: [GrayFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        return frames
    }

    /// Seconds of CPU per frame for zbar_scan_image from C.
    static func cLoopCPU(_ frames: [GrayFrame]) -> Double {
        let total = frames.reduce(0.0) { $0 + Double(referenceScan($1, repetitions: 1).nanoseconds) / 1e9 }
        return total / Double(max(1, frames.count))
    }

    /// One `hwprobe import` run; its CPU from RUSAGE_CHILDREN around the wait (Foundation reaps it).
    /// With `terminal`, the run is in a 120×36 pseudo-terminal made by util-linux `script`, where
    /// the screen (and the preview) is drawn; its CPU then includes `script`'s own copying.
    static func importRun(_ hwprobe: String, video: String, decoder: String, password: String, directory: String,
                          terminal: Bool = false, extra: [String] = []) -> ProcessRun {
        let out = "\(directory)/out-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let process = Process()
        let arguments = ["import", "-v", "--camera", video, "--password-file", password, "--out", out, "--timeout", "60"]
            + (terminal ? [] : ["--json"]) + extra
        var environment = ProcessInfo.processInfo.environment
        environment["HWPROBE_DECODER"] = decoder
        let errors = Pipe()
        if terminal {
            func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-q", "-e", "-c", "stty cols 120 rows 36 && exec " + ([hwprobe] + arguments).map(quoted).joined(separator: " "), "/dev/null"]
            environment["TERM"] = "xterm-256color"
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = errors
        } else {
            process.executableURL = URL(fileURLWithPath: hwprobe)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
        }
        process.environment = environment
        process.standardError = errors
        let before = childrenCPUSeconds()
        do { try process.run() } catch {
            return ProcessRun(cpuSeconds: 0, framesDecoded: 0, completed: false, p99Milliseconds: nil, secondMaxMilliseconds: nil, skipped: 0,
                              failure: "\(error)")
        }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let cpu = childrenCPUSeconds() - before
        let line = text.split(whereSeparator: \.isNewline).last { $0.hasPrefix("camera ") } ?? ""
        func number(_ pattern: Regex<(Substring, Substring)>) -> Double? {
            line.firstMatch(of: pattern).flatMap { Double($0.1) }
        }
        return ProcessRun(cpuSeconds: cpu, framesDecoded: Int(number(/: (\d+) frames decoded/) ?? 0),
                          completed: process.terminationStatus == 0, p99Milliseconds: number(/p99 ([\d.]+) ms/),
                          p50Milliseconds: number(/p50 ([\d.]+) ms/),
                          secondMaxMilliseconds: number(/the slowest done ([\d.]+) ms/),
                          skipped: Int(number(/with codes, (\d+) skipped/) ?? 0),
                          failure: process.terminationStatus == 0 ? nil : String(text.split(separator: "\n").last ?? "exit \(process.terminationStatus)"))
    }

    static func reportTerminal(name: String, video: CameraVideo, shown: ProcessRun, hidden: ProcessRun) {
        func describe(_ run: ProcessRun) -> String {
            guard run.completed else { return "failed (\(run.failure ?? "?"))" }
            return String(format: "decode p50 %.1f ms, p99 %.1f ms, %d frames decoded, %d skipped, %.2f s CPU",
                          run.p50Milliseconds ?? .nan, run.p99Milliseconds ?? .nan, run.framesDecoded, run.skipped, run.cpuSeconds)
        }
        print("at a 120×36 terminal, paced (\(name)): with the preview: \(describe(shown))")
        print("at a 120×36 terminal, paced (\(name)): --no-preview:     \(describe(hidden))")
        if shown.completed, hidden.completed {
            let seconds = Double(shown.framesDecoded + shown.skipped) / Double(video.framesPerSecond)
            print(String(format: "the preview's cost: %.1f ms CPU per second of video (%.2f × the run without it); p99 %+.1f ms",
                         (shown.cpuSeconds - hidden.cpuSeconds) / max(0.001, seconds) * 1000, shown.cpuSeconds / max(0.001, hidden.cpuSeconds),
                         (shown.p99Milliseconds ?? 0) - (hidden.p99Milliseconds ?? 0)))
        }
    }

    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func report(spec: Spec, video: CameraVideo, frames: Int, cLoop: Double, rows: [Row], codes: [String]) {
        let shown = Set(codes + strays)
        let union = rows.reduce(Set<String>()) { $0.union($1.readAlone) }.intersection(shown)
        print("")
        print("\(spec.name): \(frames) frames (\(video.shots.count) shots), C zbar loop \(String(format: "%.2f", cLoop * 1000)) ms/frame")
        let hardShots = video.shots.indices.filter { video.shots[$0].difficulty != .plain }
        func hardSummary(_ read: Set<Int>) -> String {
            let kinds = CameraVideo.Difficulty.allCases.filter { $0 != .plain }.map { kind -> String in
                let of = hardShots.filter { video.shots[$0].difficulty == kind }
                return "\(kind.rawValue) \(of.filter(read.contains).count)/\(of.count)"
            }
            return "\(read.count)/\(hardShots.count) (" + kinds.joined(separator: ", ") + ")"
        }
        let headers = ["arrangement", "ms/frame", "× C loop", "net ms/frame", "net × C", "frames to set", "decode only ms", "codes read alone",
                       "hard shots read",
                       "paced p99", "paced 2nd lane max", "paced skipped"]
        var table: [[String]] = []
        for row in rows {
            let perFrame = row.full.framesDecoded > 0 ? row.full.cpuSeconds / Double(row.full.framesDecoded) : nil
            let read = row.readAlone.intersection(shown)
            table.append([
                row.arrangement,
                perFrame.map { String(format: "%.2f", $0 * 1000) } ?? "–",
                perFrame.map { String(format: "%.2f", $0 / cLoop) } ?? "–",
                row.net.map { String(format: "%.2f", $0 * 1000) } ?? "–",
                row.net.map { String(format: "%.2f", $0 / cLoop) } ?? "–",
                row.full.completed ? String(row.full.framesDecoded) : "never (\(row.full.failure ?? "?"))",
                String(format: "%.2f", row.inProcessCPU * 1000),
                "\(read.count)/\(shown.count)" + (read == union ? "" : " (misses \(union.subtracting(read).count) another read)"),
                hardSummary(row.hardRead),
                row.paced.map { $0.p99Milliseconds.map { String(format: "%.1f ms", $0) } ?? "–" } ?? "",
                row.paced.map { $0.secondMaxMilliseconds.map { String(format: "%.1f ms", $0) } ?? "–" } ?? "",
                row.paced.map { String($0.skipped) } ?? "",
            ])
        }
        let widths = headers.indices.map { column in ([headers] + table).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                           : String(repeating: " ", count: max(0, widths[index] - cell.count)) + cell
            }.joined(separator: "  ")
        }
        print(line(headers))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        table.forEach { print(line($0)) }
        var json: [String: Any] = ["video": spec.name, "frames": frames, "cLoopMs": cLoop * 1000]
        json["arrangements"] = rows.map { row -> [String: Any] in
            var entry: [String: Any] = ["name": row.arrangement, "framesToSet": row.full.completed ? row.full.framesDecoded : -1,
                                        "codesReadAlone": row.readAlone.intersection(shown).count,
                                        "hardShotsRead": row.hardRead.count, "hardShots": hardShots.count]
            if row.full.framesDecoded > 0 { entry["msPerFrame"] = row.full.cpuSeconds / Double(row.full.framesDecoded) * 1000 }
            if let net = row.net { entry["netMsPerFrame"] = net * 1000; entry["netOverCLoop"] = net / cLoop }
            if let p99 = row.paced?.p99Milliseconds { entry["pacedP99Ms"] = p99 }
            if let skipped = row.paced?.skipped { entry["pacedSkipped"] = skipped }
            if let second = row.paced?.secondMaxMilliseconds { entry["pacedSecondLaneMaxMs"] = second }
            return entry
        }
        if let data = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]) {
            print("JSON " + String(decoding: data, as: UTF8.self))
        }
        // For scripts/bench-guard: the import's net CPU per frame over the C loop's, and what each read.
        for row in rows {
            if let net = row.net { print(String(format: "ratio qr.cards-%@.%@ %.4f", spec.name, row.arrangement, net / cLoop)) }
            print("read qr.cards-\(spec.name).\(row.arrangement) \(row.readAlone.intersection(shown).count) \(shown.count)")
        }
    }
}
