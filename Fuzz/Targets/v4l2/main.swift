@_spi(Fuzzing) import Capture
import FuzzSupport

/// What a V4L2 device answers, as `hwprobe list` and a capture read it: the QUERYCAP names and
/// capabilities, each ENUM_FMT and ENUM_FRAMESIZES answer, then the format S_FMT settled on and
/// one captured buffer, whose grey plane a capture copies out.
///
/// Input: driver (16 bytes) and card (32) names, capabilities u32; format answers (result byte:
/// 0 ok, 1 -EINVAL, 2 -EIO; fourcc u32; flags u8); frame size answers (result byte, type u8,
/// four u16 sizes); then grey path, width, height and bytes per line (u32 each), and the buffer.
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let driver = input.take(16)
    let card = input.take(32)
    let caps = input.u32()
    func result(_ byte: UInt8) -> Int32 { [0, -22, -5][Int(byte % 3)] }
    let formatCount = Int(input.byte() % 8)
    let formats = (0..<formatCount).map { _ in
        V4L2FormatAnswer(result: result(input.byte()), fourcc: input.u32(), flags: UInt32(input.byte()))
    }
    let sizeCount = Int(input.byte() % 8)
    let sizes = (0..<sizeCount).map { _ in
        V4L2FrameSizeAnswer(result: result(input.byte()), type: UInt32(input.byte() % 4), minWidth: UInt32(input.u16()),
                            minHeight: UInt32(input.u16()), maxWidth: UInt32(input.u16()), maxHeight: UInt32(input.u16()))
    }
    let endOfList = V4L2FormatAnswer(result: -22, fourcc: 0, flags: 0)
    let noSize = V4L2FrameSizeAnswer(result: -22, type: 0, minWidth: 0, minHeight: 0, maxWidth: 0, maxHeight: 0)
    _ = try? V4L2Probe.describe(path: "/dev/video0", driver: driver, card: card, deviceCaps: caps,
                                format: { _, index in Int(index) < formats.count ? formats[Int(index)] : endOfList },
                                frameSize: { _, index in Int(index) < sizes.count ? sizes[Int(index)] : noSize })

    let path = V4L2GreyPath.allCases[Int(input.byte()) % V4L2GreyPath.allCases.count]
    let width = Int(input.u32())
    let height = Int(input.u32())
    let bytesPerLine = Int(input.u32())
    let buffer = input.rest()
    let grey = buffer.withUnsafeBytes { path.extract(from: $0, width: width, height: height, bytesPerLine: bytesPerLine) }
    if let grey { precondition(grey.count == width * height, "a grey plane of the wrong size") }
}
