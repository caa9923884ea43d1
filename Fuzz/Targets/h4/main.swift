import BLEProtocol
import FuzzSupport
import Transports

/// The H4 framer on any byte stream: fed whole and fed in the chunks the input's first byte
/// picks, it must yield the same packets and the same error, and those packets written back
/// must be exactly the bytes they were cut from.
runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let chunkSize = Int(input.byte() % 64) + 1
    let stream = input.rest()

    let (wholePackets, wholeError, buffered) = frame(stream, chunkSize: stream.count)
    let (splitPackets, splitError, _) = frame(stream, chunkSize: chunkSize)
    precondition(wholePackets == splitPackets, "chunks of \(chunkSize) gave other packets than the whole stream")
    precondition(wholeError == splitError, "chunks of \(chunkSize) gave another error than the whole stream")
    let written = wholePackets.flatMap(\.h4Bytes)
    precondition(Array(stream.prefix(written.count)) == written, "packets do not write back to their bytes")
    if wholeError == nil {
        precondition(written.count + buffered == stream.count, "bytes neither framed nor buffered")
    }
}

/// Feeds `stream` in chunks, then once more with nothing, so an error held back behind good
/// packets comes out too.
func frame(_ stream: [UInt8], chunkSize: Int) -> (packets: [HCIPacket], error: H4Error?, buffered: Int) {
    var framer = H4Framer()
    var packets: [HCIPacket] = []
    var offset = 0
    do {
        while offset < stream.count {
            let end = min(offset + max(chunkSize, 1), stream.count)
            packets += try framer.feed(stream[offset..<end])
            offset = end
        }
        packets += try framer.feed([])
    } catch {
        return (packets, error, framer.bufferedByteCount)
    }
    return (packets, nil, framer.bufferedByteCount)
}
