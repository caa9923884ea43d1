import Flows
import FuzzSupport

/// Texts a camera read from QR codes, one per line, as the import flow takes them: each parsed
/// as a VB1 code and given to the collector that joins a backup's parts. A code that parses must
/// write back to text that parses the same; Base45 that decodes must encode back the same.
runFuzzer { bytes in
    if let decoded = try? Base45.decode(utf8: bytes) {
        precondition(Array(Base45.encode(decoded).utf8) == bytes, "Base45 does not encode back to the text it decoded")
    }
    var collector = VB1CodeCollector()
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let text = String(decoding: line, as: UTF8.self)
        if let code = try? VB1Code(parsing: text) {
            precondition((try? VB1Code(parsing: code.text)) == code, "a VB1 code does not read back the same")
        }
        _ = collector.accept(text)
        _ = (collector.currentCount, collector.scannedIndexes, collector.otherBackupIDs)
    }
}
