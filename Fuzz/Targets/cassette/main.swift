import FuzzSupport
import Transports

/// A cassette's text as CassetteReader parses it: an error or a whole cassette within the
/// format's limits, and whatever it accepts writes back to text it reads again as the same.
runFuzzer(flags: ["-max_len=65536"]) { bytes in
    guard let cassette = try? CassetteReader.read(bytes) else { return }
    precondition(cassette.peripherals.count <= BLECassette.Limits.peripherals, "too many peripherals")
    for peripheral in cassette.peripherals {
        precondition(peripheral.advertising.count <= BLECassette.Limits.advertisingRecords, "too many advertising records")
        for record in peripheral.advertising {
            precondition(record.data.count <= BLECassette.Limits.advertisingBytes, "advertising data past the limit")
        }
        for connection in peripheral.connections {
            for record in connection.att {
                precondition(!record.pdu.isEmpty && record.pdu.count <= BLECassette.Limits.attPDUBytes, "an ATT PDU past the limit")
            }
        }
    }
    let again = CassetteFormat.text(of: cassette)
    guard let reread = try? CassetteReader.read(Array(again.utf8)) else { preconditionFailure("the writer's text does not read back") }
    // The writer orders peripherals by address; compare them so.
    let sorted = cassette.peripherals.sorted { $0.address.description + $0.address.kind.rawValue < $1.address.description + $1.address.kind.rawValue }
    let resorted = reread.peripherals.sorted { $0.address.description + $0.address.kind.rawValue < $1.address.description + $1.address.kind.rawValue }
    precondition(sorted == resorted, "a cassette changed on its way through text")
}
