@_spi(Fuzzing) import Capture
import FuzzSupport

/// What a driver says about a dequeued buffer, checked as a capture checks it before reading
/// plane 0 (`V4L2DequeueCheck`): the planes it reports against those mapped, bytes used, the data
/// offset, the flags, against the mapped plane's length. Invariant: whatever is accepted lies
/// inside the mapping, on a buffer with as many planes as were mapped.
///
/// Input: planes reported (u8), planes mapped (u8, 1–8), bytes used, data offset, plane length and
/// flags (u32 each).
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let reported = Int(input.byte())
    let mapped = 1 + Int(input.byte() % 8)
    let used = Int(input.u32()), offset = Int(input.u32()), length = Int(input.u32())
    let flags = input.u32()
    if let region = V4L2DequeueCheck.greyRegion(index: 0, reportedPlanes: reported, bytesUsed: used, dataOffset: offset,
                                                flags: flags, planeLength: length, planes: mapped) {
        precondition(region.lowerBound >= 0 && region.upperBound <= length, "a grey region outside the mapped plane")
        precondition(reported == mapped, "a buffer with another plane count than mapped was read")
    }
}
