// decode-bench: Capture's QR decoders against zbar itself, on one fixed, seeded set of frames.
//
// Frames at 640x480, 1280x720 and 1920x1080 show clean, blurred, noisy and skewed QR codes (and
// nothing). Each decoder decodes every frame once for the counts and then `--reps` more times for
// the cost (CPU time of this one thread). Figures: per-frame cost median and p90 for each resolution, the
// ratio of the median to zbar's scanner driven from a plain C loop (`CZBarReference`) on the same
// frames, and how many codes each decoder read exactly per condition. `zbarimg` (zbar's own CLI)
// reads the same frames from PGM files for a second reference (wall time per frame, process start
// and file reading included). Nothing is asserted.
//
//   swift build -c release --product decode-bench && .build/release/decode-bench [options]
//
// scripts/bench-decode installs zbar-tools, builds in release and runs it.

import Capture
import CZBarReference
import Foundation
import HAL
import MediaSupport

struct Options {
    var perCondition = 8
    var repetitions = 5
    var seed: UInt64 = 1
    /// The two decoders alone, the arrangement, and the arrangement without its hint (zbar after
    /// every frame zxing reads nothing in), which shows what the hint saves.
    var decoders = ["zbar", "zxing", CodeDecoders.hintedName, CodeDecoders.defaultName, "zxing+zbar/always"]
    var zbarimg = true
    var pgmDirectory: String?
    /// Only frames whose label starts with this (e.g. `640x480-blurred`), for looking into one case.
    var only: String?
    /// `--video`: the arrangements in the whole import pipeline on camera-like videos (VideoBench).
    var video = false
    /// `--guard`: the short form CI runs (720p card video and the page videos, default arrangement).
    var guardRun = false
    /// `--all-sizes` with `--guard`: the 640×480 and 1920×1080 card videos too.
    var allSizes = false
    /// `--no-paced`: leave out the runs at the video's own pace and at a terminal (CPU figures only).
    var noPaced = false
    /// Seconds of each page video (`--page-seconds`).
    var pageSeconds = 10
    var hwprobe = ".build/release/hwprobe"
    var videoDirectory = ".build/bench-video"
    var videoCodes = 6
    var pacedAll = false
    /// `--crop-study`: zbar on region crops against the whole frame, on the `--video` videos.
    var cropStudy = false
    var arrangements = ["zbar", "zxing", CodeDecoders.hintedName, CodeDecoders.wholeFrameName, CodeDecoders.everyFrameName, CodeDecoders.defaultName]

    static let usage = """
        usage: decode-bench [--frames N] [--reps R] [--seed S] [--decoders a,b,...] [--no-zbarimg] [--keep-pgm DIR] [--only PREFIX]
          --frames     frames per condition and resolution (default 8)
          --reps       timed decodes of each frame after the first (default 5)
          --seed       seed of the frame set (default 1)
          --decoders   decoders to measure, by name (default zbar,zxing,\(CodeDecoders.defaultName),zxing+zbar/always;
                       also: regions (how often the arrangement's hint fires, as "wrong" symbols) and
                       zxing variants such as zxing/harder/nodownscale/global/fixed/threshold=N/factor=N)
          --no-zbarimg skip the zbarimg reference
          --keep-pgm   write the frames as PGM files into DIR and keep them
          --only       measure only the frames whose label starts with PREFIX (e.g. 640x480-blurred-3)
          --video      instead: each arrangement in the real `hwprobe import` on camera-like videos
                       (640x480@15, 1280x720@30, 1920x1080@20) against the C zbar loop on the same frames
          --hwprobe    the hwprobe binary --video runs (default .build/release/hwprobe)
          --video-dir  where --video keeps its videos, drawn once per seed (default .build/bench-video)
          --codes      codes in the videos' backup (default 6)
          --arrangements  decoders --video compares (default zbar,zxing,\(CodeDecoders.hintedName),\(CodeDecoders.wholeFrameName),\(CodeDecoders.everyFrameName),\(CodeDecoders.defaultName))
          --paced-all  run every video at its own pace too (default: 720p only)
          --page-seconds  seconds of each held-page video (default 10)
          --all-sizes  with --guard: every card video size, not only 1280x720
          --no-paced   leave out the runs at the video's pace and at a terminal (CPU and reads only)
          --guard      the short form CI runs: the 720p card video and 4-second page videos, the default
                       arrangement only; prints `ratio` and `read` lines for scripts/bench-guard
          --crop-study zbar on code-like regions' crops against the whole frame, on the --video videos (drawn by --video first)
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) -> String {
            guard let next = rest.popFirst() else { fail("\(flag) needs a value") }
            return next
        }
        func positive(_ flag: String) -> Int {
            let text = value(flag)
            guard let number = Int(text), number > 0 else { fail("\(flag) wants a positive integer, not \(text)") }
            return number
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--frames": options.perCondition = positive(flag)
            case "--reps": options.repetitions = positive(flag)
            case "--seed": options.seed = UInt64(positive(flag))
            case "--decoders": options.decoders = value(flag).split(separator: ",").map(String.init)
            case "--no-zbarimg": options.zbarimg = false
            case "--keep-pgm": options.pgmDirectory = value(flag)
            case "--only": options.only = value(flag)
            case "--video": options.video = true
            case "--guard":
                options.guardRun = true
                options.pageSeconds = 4
            case "--page-seconds": options.pageSeconds = positive(flag)
            case "--no-paced": options.noPaced = true
            case "--all-sizes": options.allSizes = true
            case "--gate-trace": _ = value(flag)
            case "--hwprobe": options.hwprobe = value(flag)
            case "--video-dir": options.videoDirectory = value(flag)
            case "--codes": options.videoCodes = positive(flag)
            case "--arrangements": options.arrangements = value(flag).split(separator: ",").map(String.init)
            case "--paced-all": options.pacedAll = true
            case "--crop-study": options.cropStudy = true
            case "-h", "--help":
                print(usage)
                exit(0)
            default: fail("unknown argument \(flag)")
            }
        }
        return options
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("decode-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}

/// One decoder's results on the whole frame set: per-frame cost (ns) and whether it read the code.
struct Run {
    var name: String
    var nanoseconds: [Double]
    /// Per frame: the code read exactly (always false for empty frames).
    var read: [Bool]
    /// Per frame: symbols reported that are not the frame's code (misreads, or anything on an empty frame).
    var wrong: [Int]
}

func measure(_ decoder: any CodeDecoder, on frames: [BenchFrame], repetitions: Int) -> Run {
    var run = Run(name: decoder.name, nanoseconds: [], read: [], wrong: [])
    for item in frames {
        let symbols = decoder.decode(item.frame)
        let read = item.payload.map { payload in symbols.contains { $0.bytes == payload } } ?? false
        run.read.append(read)
        run.wrong.append(symbols.filter { $0.bytes != item.payload }.count)
        let start = threadCPUNanoseconds()
        for _ in 0..<repetitions { _ = decoder.decode(item.frame) }
        run.nanoseconds.append(Double(threadCPUNanoseconds() - start) / Double(repetitions))
    }
    return run
}

/// zbar_scan_image from C on packed copies of the same frames. zbar reports how many symbols it
/// found, not their bytes, so a frame counts as read when zbar found one symbol on a frame with a code.
func measureReference(on frames: [BenchFrame], repetitions: Int) -> Run {
    var run = Run(name: "zbar-C", nanoseconds: [], read: [], wrong: [])
    for item in frames {
        let (elapsed, found) = referenceScan(item.frame, repetitions: repetitions)
        run.nanoseconds.append(Double(elapsed) / Double(repetitions))
        run.read.append(item.payload != nil && found >= 1)
        run.wrong.append(item.payload == nil ? Int(found) : max(0, Int(found) - 1))
    }
    return run
}

/// zbar_scan_image from C `repetitions` times on a packed copy of `frame`: nanoseconds of this
/// thread's CPU for all of them, and how many symbols zbar found.
func referenceScan(_ frame: GrayFrame, repetitions: Int) -> (nanoseconds: Int64, found: Int32) {
    var packed = [UInt8]()
    packed.reserveCapacity(frame.width * frame.height)
    for row in 0..<frame.height {
        packed.append(contentsOf: frame.pixels[(row * frame.stride)..<(row * frame.stride + frame.width)])
    }
    var found: Int32 = 0
    let elapsed = packed.withUnsafeBufferPointer { pixels in
        zbar_reference_scan(pixels.baseAddress, Int32(frame.width), Int32(frame.height), Int32(repetitions), &found)
    }
    return (max(elapsed, 0), found)
}

/// CPU time this thread has used: decode cost on one core, whatever else the machine is running.
func threadCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func nanoseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    // Nearest rank: p90 of 40 frames is the 36th.
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

func milliseconds(_ ns: Double) -> String { String(format: "%.2f", ns / 1e6) }

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

// MARK: run

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
if options.cropStudy {
    do {
        let paths = VideoBench.specs.map { "\(options.videoDirectory)/v\(CameraVideo.version)-seed\(options.seed)-\(options.videoCodes)codes-\($0.name).y4m" }
        try CropStudy.run(paths: paths.filter { FileManager.default.fileExists(atPath: $0) })
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("decode-bench: \(error)\n".utf8))
        exit(1)
    }
}
if let index = CommandLine.arguments.firstIndex(of: "--gate-trace"), index + 1 < CommandLine.arguments.count {
    do { try GateTrace.run(CommandLine.arguments[index + 1]) } catch { Options.fail("\(error)") }
    exit(0)
}
if options.video || options.guardRun {
    do {
        let arrangements = options.guardRun ? [CodeDecoders.defaultName] : options.arrangements
        try VideoBench.run(seed: options.seed, codes: options.videoCodes, hwprobe: options.hwprobe, directory: options.videoDirectory,
                           pacedAll: options.pacedAll, arrangements: arrangements, quick: options.guardRun && !options.allSizes,
                           pacedRuns: !options.guardRun && !options.noPaced)
        try PageBench.run(seed: options.seed, seconds: options.pageSeconds, hwprobe: options.hwprobe, directory: options.videoDirectory,
                          arrangements: arrangements)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("decode-bench: \(error)\n".utf8))
        exit(1)
    }
}
var decoders: [any CodeDecoder] = []
for name in options.decoders {
    if let variant = Experiment.decoder(named: name) {
        decoders.append(variant)
        continue
    }
    do { decoders.append(try CodeDecoders.decoder(named: name)) } catch { Options.fail(error.description) }
}

FileHandle.standardError.write(Data("decode-bench: drawing \(options.perCondition * Condition.allCases.count * Resolution.all.count) frames (seed \(options.seed))\n".utf8))
var frames: [BenchFrame]
do { frames = try FrameSet.make(seed: options.seed, perCondition: options.perCondition) } catch {
    Options.fail("cannot draw the frames: \(error)")
}
if let prefix = options.only { frames = frames.filter { $0.label.hasPrefix(prefix) } }

var runs: [Run] = []
FileHandle.standardError.write(Data("decode-bench: zbar from C\n".utf8))
runs.append(measureReference(on: frames, repetitions: options.repetitions))
for decoder in decoders {
    FileHandle.standardError.write(Data("decode-bench: \(decoder.name)\n".utf8))
    runs.append(measure(decoder, on: frames, repetitions: options.repetitions))
}
var zbarimg: ZBarImgRun?
if options.zbarimg {
    FileHandle.standardError.write(Data("decode-bench: zbarimg\n".utf8))
    do { zbarimg = try ZBarImg.run(on: frames, keepingIn: options.pgmDirectory) } catch {
        FileHandle.standardError.write(Data("decode-bench: zbarimg skipped: \(error)\n".utf8))
    }
} else if let directory = options.pgmDirectory {
    do { try ZBarImg.writePGMs(frames, into: directory) } catch { Options.fail("cannot write PGM files: \(error)") }
}

Report.print(frames: frames, runs: runs, zbarimg: zbarimg, options: options)
