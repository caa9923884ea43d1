import Foundation
import HAL

public struct QRCodeGenerationFailed: Error, CustomStringConvertible {
    public var description: String
}

/// QR symbols made by Debian's `qrencode` CLI (test-only; never linked into the product).
public enum QRFixture {
    /// The module matrix (true = dark) of `text`, without quiet zone. Upper-case letters, digits
    /// and ` $%*+-./:` make qrencode choose alphanumeric mode by itself.
    public static func modules(_ text: String, level: String = "M") throws -> [[Bool]] {
        try run(["-t", "ASCII", "-m", "0", "-l", level, text], input: nil, describing: "'\(text)'")
    }

    /// The module matrix of `bytes` in 8-bit (byte) mode, whatever they are: qrencode reads them
    /// from standard input, so NUL and bytes that are not UTF-8 are kept.
    public static func modules(bytes: [UInt8], level: String = "M") throws -> [[Bool]] {
        try run(["-8", "-t", "ASCII", "-m", "0", "-l", level], input: bytes, describing: "\(bytes.count) bytes")
    }

    private static func run(_ arguments: [String], input: [UInt8]?, describing what: String) throws -> [[Bool]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/qrencode")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let feed = Pipe()
        if input != nil { process.standardInput = feed }
        do { try process.run() } catch {
            throw QRCodeGenerationFailed(description: "cannot run /usr/bin/qrencode (apt install qrencode): \(error)")
        }
        if let input {
            // Small enough for the pipe's buffer: written whole before reading the output.
            feed.fileHandleForWriting.write(Data(input))
            try? feed.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw QRCodeGenerationFailed(description: "qrencode exited with \(process.terminationStatus)")
        }
        // `-t ASCII` draws each module as two characters, "##" dark and "  " light, one line per row.
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
        let rows = lines.map { line -> [Bool] in
            let chars = Array(line)
            return stride(from: 0, to: chars.count, by: 2).map { chars[$0] == "#" }
        }
        guard let n = rows.first?.count, n >= 21, rows.count == n, rows.allSatisfy({ $0.count == n }) else {
            throw QRCodeGenerationFailed(description: "qrencode drew no square symbol for \(what)")
        }
        return rows
    }

    /// Draws `modules` at `scale` pixels per module with its top-left corner at (x, y) into a grey picture.
    public static func draw(_ modules: [[Bool]], scale: Int, at x: Int, _ y: Int, into pixels: inout [UInt8], width: Int,
                     dark: UInt8 = 25, light: UInt8 = 230) {
        let quiet = 4
        for row in -quiet..<(modules.count + quiet) {
            for column in -quiet..<(modules.count + quiet) {
                let isDark = modules.indices.contains(row) && modules.indices.contains(column) && modules[row][column]
                for dy in 0..<scale {
                    for dx in 0..<scale {
                        let px = x + (column + quiet) * scale + dx
                        let py = y + (row + quiet) * scale + dy
                        pixels[py * width + px] = isDark ? dark : light
                    }
                }
            }
        }
    }

    /// A frame showing `text` as a QR code on a mid-grey background.
    public static func frame(_ text: String, width: Int = 320, height: Int = 240, scale: Int = 4,
                      sequence: UInt64 = 0) throws -> GrayFrame {
        let modules = try modules(text)
        var pixels = [UInt8](repeating: 140, count: width * height)
        let side = (modules.count + 8) * scale
        draw(modules, scale: scale, at: (width - side) / 2, (height - side) / 2, into: &pixels, width: width)
        return GrayFrame(width: width, height: height, pixels: pixels, timestamp: .zero, sequence: sequence)
    }

    public static func blank(width: Int = 320, height: Int = 240, sequence: UInt64 = 0) -> GrayFrame {
        GrayFrame(width: width, height: height, pixels: [UInt8](repeating: 140, count: width * height),
                  timestamp: .zero, sequence: sequence)
    }
}
