import Capture
import FuzzSupport

/// `CodeRegions` (the hint that gives zbar its turn) on arbitrary frames: it must return at most
/// `limit` regions, each inside the frame, whatever the pixels.
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let limit = 1 + Int(input.byte()) % 4
    let frame = input.grayFrame()
    let regions = CodeRegions.find(in: frame, limit: limit)
    precondition(regions.count <= limit, "\(regions.count) regions for a limit of \(limit)")
    for region in regions {
        precondition(region.x >= 0 && region.y >= 0 && region.width > 0 && region.height > 0
                     && region.x + region.width <= frame.width && region.y + region.height <= frame.height,
                     "region \(region) outside a \(frame.width)x\(frame.height) frame")
    }
}
