import FuzzSupport
import Transports

/// A btsnoop capture as BTSnoopReader parses it: strict (an error, never a half-read file), and
/// every record it returns holds exactly the bytes its header says, inside the input.
runFuzzer { bytes in
    guard let capture = try? BTSnoopReader.parse(bytes) else { return }
    var total = BTSnoopFormat.headerSize
    for record in capture.records {
        precondition(record.packet.count == Int(record.includedLength), "a record holding \(record.packet.count) of \(record.includedLength) bytes")
        precondition(record.includedLength <= record.originalLength, "included more than the original")
        total += BTSnoopFormat.recordHeaderSize + record.packet.count
    }
    precondition(total == bytes.count, "records cover \(total) of \(bytes.count) bytes")
}
