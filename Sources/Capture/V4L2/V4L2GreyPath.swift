import HAL

/// How a V4L2 pixel format becomes a grey plane, cheapest first. Pure, so it is unit-tested.
/// Formats that need real decoding (MJPG, RGB, …) have no path here: V4L2Camera asks libv4l2
/// to convert them to YU12 and then takes its Y plane.
///
/// A multi-planar camera's buffer is one or more planes, each mapped on its own; every path here
/// reads plane 0 only, which for all of them starts with the luma rows.
public enum V4L2GreyPath: Sendable, Hashable, CaseIterable {
    /// GREY (a.k.a. Y8): the buffer is the grey plane.
    case grey
    /// NV12: the Y plane comes first, followed by interleaved chroma.
    case nv12
    /// YU12 (I420): the Y plane comes first, followed by U and V planes.
    case yu12
    /// NV21, YV12, NV16, NV61: like NV12 and YU12, the Y plane first (chroma order or
    /// subsampling differ, which a grey picture ignores).
    case nv21, yv12, nv16, nv61
    /// The multi-planar API's formats with a plane per component (NV12M = NM12, YUV420M = YM12,
    /// …): plane 0 is the Y plane, the chroma planes are not read.
    case nv12m, nv21m, nv16m, nv61m, yu12m, yv12m, yu16m, yv16m, yu24m, yv24m
    /// YUYV: Y0 U Y1 V … — every other byte is luminance.
    case yuyv

    /// The path's format as the little-endian code V4L2 uses in ENUM_FMT and S_FMT.
    public var fourcc: UInt32 { Self.code(name) }

    /// The four-character V4L2 name.
    public var name: String {
        switch self {
        case .grey: "GREY"
        case .nv12: "NV12"
        case .yu12: "YU12"
        case .nv21: "NV21"
        case .yv12: "YV12"
        case .nv16: "NV16"
        case .nv61: "NV61"
        case .nv12m: "NM12"
        case .nv21m: "NM21"
        case .nv16m: "NM16"
        case .nv61m: "NM61"
        case .yu12m: "YM12"
        case .yv12m: "YM21"
        case .yu16m: "YM16"
        case .yv16m: "YM61"
        case .yu24m: "YM24"
        case .yv24m: "YM42"
        case .yuyv: "YUYV"
        }
    }

    /// The path for a format code a device reported, or nil when this format has no direct grey path.
    public init?(fourcc: UInt32) {
        guard let path = Self.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = path
    }

    /// The little-endian V4L2 code of a four-character name (v4l2_fourcc).
    public static func code(_ name: String) -> UInt32 {
        var value: UInt32 = 0
        for (i, byte) in name.utf8.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(i)) }
        return value
    }

    /// The cheapest path among the formats a device offers (`allCases` order), or nil.
    public static func choose(from offered: [UInt32]) -> V4L2GreyPath? {
        allCases.first { offered.contains($0.fourcc) }
    }

    /// Copies the grey plane out of one captured buffer. `bytesPerLine` is the device's row pitch
    /// (for YUYV it covers 2 bytes a pixel). Returns nil when the buffer is too short, which
    /// includes sizes too large to count: they come from the driver, which may be wrong.
    public func extract(from bytes: UnsafeRawBufferPointer, width: Int, height: Int, bytesPerLine: Int) -> [UInt8]? {
        guard let needed = bytesNeeded(width: width, height: height, bytesPerLine: bytesPerLine), bytes.count >= needed else { return nil }
        let pitch = max(bytesPerLine, width * bytesPerPixel)
        var out = [UInt8](repeating: 0, count: width * height)
        if bytesPerPixel == 1 {
            out.withUnsafeMutableBytes { dst in
                for row in 0..<height {
                    let src = UnsafeRawBufferPointer(rebasing: bytes[(row * pitch)..<(row * pitch + width)])
                    UnsafeMutableRawBufferPointer(rebasing: dst[(row * width)..<(row * width + width)]).copyMemory(from: src)
                }
            }
        } else {
            for row in 0..<height {
                let base = row * pitch
                for x in 0..<width { out[row * width + x] = bytes[base + bytesPerPixel * x] }
            }
        }
        return out
    }

    /// Bytes of the luma plane a buffer must hold, from the first row's start to the last row's
    /// end (at least `bytesPerLine` apart); nil for sizes no buffer could have.
    public func bytesNeeded(width: Int, height: Int, bytesPerLine: Int) -> Int? {
        guard width > 0, height > 0, bytesPerLine >= 0 else { return nil }
        let (rowBytes, overflow) = width.multipliedReportingOverflow(by: bytesPerPixel)
        guard !overflow else { return nil }
        let pitch = max(bytesPerLine, rowBytes)
        let (before, overflowToo) = pitch.multipliedReportingOverflow(by: height - 1)
        let (total, overflowThree) = before.addingReportingOverflow(rowBytes)
        return overflowToo || overflowThree ? nil : total
    }

    /// Bytes a pixel takes in the luma rows: 2 for YUYV (luma and chroma interleaved), 1 for the rest.
    var bytesPerPixel: Int { self == .yuyv ? 2 : 1 }
}
