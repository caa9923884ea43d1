import Capture
import FuzzSupport

/// The decoder arrangement `import` uses (zxing, then zbar on CodeRegions' hint) on arbitrary
/// frames, both fallbacks: no crash, leak or runaway allocation in either library or our bridge,
/// and no symbol longer than a QR code can hold.
let hinted = ZXingThenZBarDecoder()
let always = ZXingThenZBarDecoder(fallback: .always)

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let decoder = input.byte() & 1 == 0 ? hinted : always
    let frame = input.grayFrame()
    for symbol in decoder.decode(frame) {
        precondition(symbol.bytes.count <= 8192, "a \(symbol.bytes.count)-byte symbol from a \(frame.width)x\(frame.height) frame")
    }
}
