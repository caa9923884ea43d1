import Foundation
import HAL
import Synchronization
import Testing
@_exported import MediaSupport

/// The three codes of the VB1 spec's test vector (the third has spaces inside, which are data).
enum VB1Vector {
    static let codes = [
        "VB1:32966C6C:1/3:.+AFTAW503C1V50X507H0QS00+0J61%H1CT1P.1% CC3DVED5QDO$D%5E41S/K6EK0HK2J/CXHA$4P0180CQR0K",
        "VB1:32966C6C:2/3:4OGAS9A4S197TN7XWPE$R32J%H65AKD43ODUBCFZK10WA*NSAN1IHU4QRYGL2DATO7%TLSNP61F7QQU+QHZ74X4",
        "VB1:32966C6C:3/3:F01LUF2Q8:Y8L/RI3BKCICWJ47H58E9GMOQSCQMK GGP3K7SE8G GEQRTD.APADX6Q*8WJOI0O8I$OU OM OA.B",
    ]
}

/// Deterministic pseudo-random numbers (tests must repeat exactly).
struct TestRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }
    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

enum ImageOps {
    /// Adds uniform noise of ±amplitude to every pixel.
    static func noisy(_ frame: GrayFrame, amplitude: Int, seed: UInt64 = 42) -> GrayFrame {
        var random = TestRandom(state: seed)
        var out = frame
        out.pixels = frame.pixels.map { UInt8(clamping: Int($0) + random.next(in: -amplitude...amplitude)) }
        return out
    }

    /// A (2r+1)×(2r+1) box filter: an out-of-focus camera.
    static func boxBlurred(_ frame: GrayFrame, radius: Int) -> GrayFrame {
        var out = frame
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                var sum = 0
                var count = 0
                for dy in -radius...radius {
                    for dx in -radius...radius {
                        let sx = x + dx
                        let sy = y + dy
                        guard sx >= 0, sy >= 0, sx < frame.width, sy < frame.height else { continue }
                        sum += Int(frame.pixels[sy * frame.stride + sx])
                        count += 1
                    }
                }
                out.pixels[y * frame.stride + x] = UInt8(sum / count)
            }
        }
        return out
    }

    /// The same picture with `padding` junk bytes after every row.
    static func padded(_ frame: GrayFrame, padding: Int) -> GrayFrame {
        var pixels: [UInt8] = []
        for row in 0..<frame.height {
            pixels.append(contentsOf: frame.pixels[(row * frame.stride)..<(row * frame.stride + frame.width)])
            pixels.append(contentsOf: (0..<padding).map { UInt8(($0 * 37 + row) & 0xFF) })
        }
        return GrayFrame(width: frame.width, height: frame.height, stride: frame.width + padding, pixels: pixels,
                         timestamp: frame.timestamp, sequence: frame.sequence)
    }
}

/// A scratch directory removed when the test is done.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let path = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension CameraError {
    /// The message of a `.badFile` error, empty for any other case.
    var badFileMessage: String {
        if case .badFile(let message) = self { return message }
        return ""
    }
}
