import BLEProtocol
import HAL

/// The cassette's text form (docs/cassette-format.md): one record per line, words separated by
/// single spaces, bytes in lower-case hex, times in seconds with six decimals. Version 1.3 (1.0
/// plus camera and pad sections in 1.1, plus a connection's security records in 1.2, plus a
/// private address's resolved identity in 1.3).
///
/// Text, because a cassette is meant to be read in a review and attached to a bug report, and
/// line-oriented, so that two recordings of the same session differ line by line only where the
/// timings and values differ (`diff` shows it). The writer orders everything deterministically:
/// peripherals by address, each one's records in time order.
public enum CassetteFormat {
    /// The format's major version; a reader refuses a cassette with a newer one.
    public static let major = 1
    /// The format's minor version this reader knows; a newer one is read, skipping what it added.
    public static let minor = 3
    /// The first line: the magic word and the version.
    public static let magic = "hwprobe-cassette"

    /// The first line of `cassette`, e.g. `hwprobe-cassette 1.1`: the oldest version that holds
    /// everything in it (1.2 only when a connection has security records, 1.3 only when a device
    /// has a resolved identity), so a cassette without them stays exactly what an older writer
    /// wrote, and an older reader reads it whole.
    public static func header(for cassette: Cassette) -> String {
        let resolved = cassette.ble.peripherals.contains { $0.identity != nil }
        let secured = cassette.ble.peripherals.contains { $0.connections.contains { !$0.security.isEmpty } }
        return "\(magic) \(major).\(resolved ? 3 : secured ? 2 : 1)"
    }

    /// The largest cassette the reader takes (a long recording of a busy room stays well below).
    public static let maximumBytes = 32 * 1024 * 1024
    /// The longest line: an extended advertisement's 1650 bytes in hex, and room for the words.
    public static let maximumLineLength = 4096

    /// The whole cassette as text, ending with its `end` line.
    public static func text(of cassette: BLECassette) -> String {
        text(of: Cassette(ble: cassette))
    }

    /// The BLE peripherals' sections, by address.
    static func bleLines(_ cassette: BLECassette) -> [String] {
        var lines: [String] = []
        for peripheral in cassette.peripherals.sorted(by: { order($0.address, $1.address) }) {
            lines.append("device ble \(peripheral.address) \(peripheral.address.kind.rawValue)")
            if let identity = peripheral.identity { lines.append("resolved \(identity) \(identity.kind.rawValue)") }
            for handle in peripheral.varying.sorted() { lines.append("varying \(handleText(handle))") }
            for summary in GATTSummary(peripheral).lines { lines.append(summary) }
            for record in peripheral.advertising {
                lines.append("adv \(time(record.at)) \(record.kind.rawValue) \(record.rssi) \(hex(record.data))")
            }
            for connection in peripheral.connections {
                lines.append("connection \(time(connection.at))")
                // ATT and security records in time order (security first at the same time).
                var security = connection.security[...]
                for record in connection.att {
                    while let first = security.first, first.at <= record.at { lines.append(securityLine(security.removeFirst())) }
                    lines.append("att \(time(record.at)) \(record.direction.rawValue) \(hex(record.pdu))")
                }
                lines += security.map(securityLine)
                if let end = connection.end {
                    lines.append("disconnect \(time(end.at)) \(end.byHost ? "host" : "peer") 0x\(hexByte(end.reason))")
                }
            }
        }
        return lines
    }

    /// `pairing SECONDS METHOD sc|legacy DEVICE-KEYS HOST-KEYS`, `pairing-failed SECONDS 0xRR`
    /// or `encrypted SECONDS` (key kinds joined by commas, `-` for none).
    static func securityLine(_ record: BLECassette.SecurityRecord) -> String {
        switch record.event {
        case .pairing(let method, let sc, let deviceKeys, let hostKeys):
            func keys(_ kinds: [String]) -> String { kinds.isEmpty ? "-" : kinds.joined(separator: ",") }
            return "pairing \(time(record.at)) \(method) \(sc ? "sc" : "legacy") \(keys(deviceKeys)) \(keys(hostKeys))"
        case .pairingFailed(let reason):
            return "pairing-failed \(time(record.at)) 0x\(hexByte(reason))"
        case .encrypted:
            return "encrypted \(time(record.at))"
        }
    }

    /// Sorts peripherals by address, so the same recording always writes the same file.
    static func order(_ a: BLEAddress, _ b: BLEAddress) -> Bool {
        if a.bytes != b.bytes { return a.bytes.lexicographicallyPrecedes(b.bytes) }
        return a.kind == .public && b.kind == .random
    }

    /// `12.000250`: whole seconds and six decimals (microseconds), never negative.
    static func time(_ duration: Duration) -> String {
        let micros = max(0, duration.wholeMicroseconds)
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// Bytes as lower-case hex, or `-` for none, as cassette lines write values.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "-" : Hex.string(bytes, .lower)
    }

    /// One byte as two lower-case hex digits, e.g. a disconnect reason.
    static func hexByte(_ byte: UInt8) -> String { Hex.byte(byte, .lower) }

    /// An ATT handle as cassette lines write it, e.g. `0x002a`.
    static func handleText(_ handle: UInt16) -> String {
        "0x" + Hex.word(handle, .lower)
    }
}

/// The GATT database as the recorded discovery answered it, with the last value read of each
/// characteristic: the `service`, `characteristic`, `descriptor` and `value` lines a person
/// reads first. Derived from the ATT records (which remain what a replay answers from).
struct GATTSummary {
    var lines: [String] = []

    init(_ peripheral: BLECassette.Peripheral) {
        var services: [UInt16: (end: UInt16, uuid: BluetoothUUID)] = [:]
        var characteristics: [UInt16: (properties: UInt8, uuid: BluetoothUUID)] = [:]
        var descriptors: [UInt16: BluetoothUUID] = [:]
        var values: [UInt16: [UInt8]] = [:]
        for connection in peripheral.connections {
            var pending: ATTPDU?
            for record in connection.att {
                guard let pdu = try? ATTPDU(parsing: record.pdu) else { continue }
                if record.direction == .toPeripheral {
                    if pdu.isRequest { pending = pdu }
                    continue
                }
                guard pdu.isResponse, let request = pending else { continue }
                pending = nil
                switch (request, pdu) {
                case (.readByGroupTypeRequest(_, _, let type), .readByGroupTypeResponse(let groups)) where type == BluetoothUUID(0x2800):
                    for group in groups {
                        if let uuid = BluetoothUUID(littleEndian: group.value) { services[group.handle] = (group.endGroup, uuid) }
                    }
                case (.readByTypeRequest(_, _, let type), .readByTypeResponse(let entries)) where type == BluetoothUUID(0x2803):
                    for entry in entries where entry.value.count >= 5 {
                        let valueHandle = UInt16(entry.value[1]) | UInt16(entry.value[2]) << 8
                        if let uuid = BluetoothUUID(littleEndian: entry.value.dropFirst(3)) {
                            characteristics[valueHandle] = (entry.value[0], uuid)
                        }
                    }
                case (.findInformationRequest, .findInformationResponse(let entries)):
                    for entry in entries { descriptors[entry.handle] = entry.uuid }
                case (.readRequest(let handle), .readResponse(let value)):
                    values[handle] = value
                default:
                    break
                }
            }
        }
        // A characteristic's declaration and value show up in Find Information too: only the rest are descriptors.
        let declarations = Set(characteristics.keys.flatMap { [$0, $0 &- 1] }).union(services.keys)
        for handle in services.keys.sorted() {
            guard let service = services[handle] else { continue }
            lines.append("service \(CassetteFormat.handleText(handle)) \(CassetteFormat.handleText(service.end)) \(service.uuid)")
        }
        for handle in characteristics.keys.sorted() {
            guard let characteristic = characteristics[handle] else { continue }
            lines.append("characteristic \(CassetteFormat.handleText(handle)) 0x\(CassetteFormat.hexByte(characteristic.properties)) \(characteristic.uuid)")
        }
        for handle in descriptors.keys.sorted() where !declarations.contains(handle) {
            guard let uuid = descriptors[handle], uuid != BluetoothUUID(0x2800), uuid != BluetoothUUID(0x2801),
                  uuid != BluetoothUUID(0x2803) else { continue }
            lines.append("descriptor \(CassetteFormat.handleText(handle)) \(uuid)")
        }
        for handle in values.keys.sorted() {
            lines.append("value \(CassetteFormat.handleText(handle)) \(CassetteFormat.hex(values[handle] ?? []))")
        }
    }
}
