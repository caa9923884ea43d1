import HAL

/// How a V4L2 pixel format becomes a grey plane, cheapest first. Pure, so it is unit-tested.
/// Formats that need real decoding (MJPG, RGB, …) have no path here: V4L2Camera asks libv4l2
/// to convert them to YU12 and then takes its Y plane.
public enum V4L2GreyPath: Sendable, Hashable, CaseIterable {
    /// GREY (a.k.a. Y8): the buffer is the grey plane.
    case grey
    /// NV12: the Y plane comes first, followed by interleaved chroma.
    case nv12
    /// YU12 (I420): the Y plane comes first, followed by U and V planes.
    case yu12
    /// YUYV: Y0 U Y1 V … — every other byte is luminance.
    case yuyv

    public var fourcc: UInt32 {
        switch self {
        case .grey: Self.code("GREY")
        case .nv12: Self.code("NV12")
        case .yu12: Self.code("YU12")
        case .yuyv: Self.code("YUYV")
        }
    }

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
        guard width > 0, height > 0 else { return nil }
        switch self {
        case .grey, .nv12, .yu12:
            let pitch = max(bytesPerLine, width)
            guard let needed = Self.planeBytes(pitch: pitch, rows: height, lastRow: width), bytes.count >= needed else { return nil }
            var out = [UInt8](repeating: 0, count: width * height)
            out.withUnsafeMutableBytes { dst in
                for row in 0..<height {
                    let src = UnsafeRawBufferPointer(rebasing: bytes[(row * pitch)..<(row * pitch + width)])
                    UnsafeMutableRawBufferPointer(rebasing: dst[(row * width)..<(row * width + width)]).copyMemory(from: src)
                }
            }
            return out
        case .yuyv:
            let (rowBytes, overflow) = width.multipliedReportingOverflow(by: 2)
            guard !overflow else { return nil }
            let pitch = max(bytesPerLine, rowBytes)
            guard let needed = Self.planeBytes(pitch: pitch, rows: height, lastRow: rowBytes), bytes.count >= needed else { return nil }
            var out = [UInt8](repeating: 0, count: width * height)
            for row in 0..<height {
                let base = row * pitch
                for x in 0..<width { out[row * width + x] = bytes[base + 2 * x] }
            }
            return out
        }
    }

    /// Bytes from the first row's start to the last row's end, or nil when no buffer could be that big.
    private static func planeBytes(pitch: Int, rows: Int, lastRow: Int) -> Int? {
        let (before, overflow) = pitch.multipliedReportingOverflow(by: rows - 1)
        let (total, overflowToo) = before.addingReportingOverflow(lastRow)
        return overflow || overflowToo ? nil : total
    }
}
