import HAL
import LinuxIO

/// Writes grey frames as a YUV4MPEG2 file (for tests and test-video generators). Chroma planes,
/// when the colour space has them, are neutral (128): the picture stays grey.
package final class Y4MWriter {
    /// The file being written, named in every error.
    public let path: String
    /// What the file was declared as; every frame written must match its width and height.
    public let header: Y4MHeader
    private var fd: FileDescriptor?
    private let chroma: [UInt8]

    /// Creates (or truncates) `path` and writes the header. Any colour space can be written; `Cmono`
    /// and `C420jpeg` are the usual choices.
    package init(path: String, width: Int, height: Int, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1,
                colorSpace: Y4MColorSpace = .mono) throws(CameraError) {
        let header = Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                               frameRateDenominator: frameRateDenominator, colorSpace: colorSpace)
        guard width > 0, height > 0, width <= Y4MHeader.maximumDimension, height <= Y4MHeader.maximumDimension,
              frameRateNumerator > 0, frameRateDenominator > 0
        else { throw .badFile("cannot write \(path): bad picture size \(width)x\(height) or frame rate") }
        self.path = path
        self.header = header
        do { fd = try FileDescriptor.open(path, .writeOnly, options: [.createOrTruncate, .closeOnExec]) } catch {
            throw .io("cannot create \(path): \(error)")
        }
        let extra = colorSpace.extraPlaneBytes(width: width, height: height)
        chroma = colorSpace == .c444alpha
            ? [UInt8](repeating: 128, count: 2 * width * height) + [UInt8](repeating: 255, count: width * height)
            : [UInt8](repeating: 128, count: extra)
        try write(Array((header.line + "\n").utf8))
    }

    deinit { fd?.close() }

    /// Appends one frame: its Y plane row by row (honouring `stride`), then neutral chroma.
    public func write(_ frame: GrayFrame) throws(CameraError) {
        guard frame.width == header.width, frame.height == header.height else {
            throw .badFile("cannot write a \(frame.width)x\(frame.height) frame into \(path), which is \(header.width)x\(header.height)")
        }
        guard frame.stride >= frame.width, frame.pixels.count >= frame.stride * (frame.height - 1) + frame.width else {
            throw .badFile("cannot write frame \(frame.sequence) into \(path): it has too few pixels for its size")
        }
        var bytes = Array("FRAME\n".utf8)
        bytes.reserveCapacity(bytes.count + header.frameBytes)
        if frame.stride == frame.width {
            bytes.append(contentsOf: frame.pixels[0..<(frame.width * frame.height)])
        } else {
            for row in 0..<frame.height {
                let offset = row * frame.stride
                bytes.append(contentsOf: frame.pixels[offset..<(offset + frame.width)])
            }
        }
        bytes.append(contentsOf: chroma)
        try write(bytes)
    }

    /// Flushes nothing (writes are unbuffered) and closes the file.
    public func close() {
        fd?.close()
        fd = nil
    }

    private func write(_ bytes: [UInt8]) throws(CameraError) {
        guard let fd else { throw .io("\(path) is already closed") }
        do { try fd.writeAll(bytes) } catch { throw .io("writing \(path) failed: \(error)") }
    }
}
