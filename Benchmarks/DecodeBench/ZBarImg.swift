import Foundation
import HAL

/// zbarimg's results: wall time per frame (one process per frame, start-up and file reading
/// included: what a script calling zbarimg would pay) and what it read.
struct ZBarImgRun {
    var nanoseconds: [Double]
    var read: [Bool]
    var wrong: [Int]
}

struct ZBarImgFailure: Error, CustomStringConvertible {
    var description: String
}

enum ZBarImg {
    static let path = "/usr/bin/zbarimg"

    /// Runs `zbarimg --raw -Sbinary` (QR only) once per frame on PGM copies of the frames. In binary
    /// raw mode zbarimg prints each symbol's bytes exactly and nothing else, so a frame counts as
    /// read when the output is exactly its code's bytes.
    static func run(on frames: [BenchFrame], keepingIn directory: String?) throws -> ZBarImgRun {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ZBarImgFailure(description: "\(path) not found (apt install zbar-tools)")
        }
        let folder = directory ?? NSTemporaryDirectory() + "decode-bench-\(getpid())"
        let files = try writePGMs(frames, into: folder)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
        var result = ZBarImgRun(nanoseconds: [], read: [], wrong: [])
        let clock = ContinuousClock()
        for (item, file) in zip(frames, files) {
            let start = clock.now
            let output = try scan(file)
            result.nanoseconds.append(nanoseconds(start.duration(to: clock.now)))
            let read = item.payload.map { output == $0 } ?? false
            result.read.append(read)
            result.wrong.append(!read && !output.isEmpty ? 1 : 0)
        }
        return result
    }

    static func scan(_ file: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--nodbus", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", file]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw ZBarImgFailure(description: "cannot run \(path): \(error)") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // 0: symbols found; 4: none found. Anything else is zbarimg failing to read the file.
        guard process.terminationStatus == 0 || process.terminationStatus == 4 else {
            throw ZBarImgFailure(description: "zbarimg exited with \(process.terminationStatus) on \(file)")
        }
        return Array(data)
    }

    /// Writes every frame as a binary PGM (P5) named after its label; returns the paths in order.
    @discardableResult
    static func writePGMs(_ frames: [BenchFrame], into directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try frames.map { item in
            let frame = item.frame
            var bytes = Array("P5\n\(frame.width) \(frame.height)\n255\n".utf8)
            for row in 0..<frame.height {
                bytes.append(contentsOf: frame.pixels[(row * frame.stride)..<(row * frame.stride + frame.width)])
            }
            let file = "\(directory)/\(item.label).pgm"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return file
        }
    }
}
