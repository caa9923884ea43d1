import FuzzSupport
@_spi(Fuzzing) import MirrorV1

/// A value of each of the mirror profile's characteristics the client reads or is notified of:
/// scan state, scale, alignment, device information and scan result.
runFuzzer { bytes in
    _ = MirrorValues.scanStatus(bytes)
    _ = MirrorValues.scaleStatus(bytes)
    _ = MirrorValues.alignment(bytes)
    _ = MirrorValues.info(bytes)
    _ = MirrorValues.result(bytes)
}
