import Capture
import FuzzSupport
import Glibc

/// A .y4m file, read frame by frame as `--camera file:` reads it.
let path = "/tmp/hwprobe-fuzz-y4m-\(getpid()).y4m"

runFuzzer { bytes in
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    precondition(written == bytes.count, "cannot write \(path)")
    guard let reader = try? Y4MReader(path: path) else { return }
    while let frame = try? reader.nextFrame() {
        precondition(frame.pixels.count == reader.header.width * reader.header.height, "a frame of the wrong size")
    }
    reader.close()
}
