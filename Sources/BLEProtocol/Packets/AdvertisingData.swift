import HAL

/// The advertising data format (Core Specification Vol 3 Part C §11, Supplement Part A): a run
/// of structures, each a length byte, a type byte and `length - 1` bytes of data.
public enum AdvertisingData {
    /// AD type codes this host reads.
    public enum ADType {
        /// Discoverable mode and BR/EDR support bits; `encode` writes it first.
        public static let flags: UInt8 = 0x01
        /// Some of the device's 16-bit service UUIDs; parsed like the complete list.
        public static let incomplete16BitUUIDs: UInt8 = 0x02
        /// All of the device's 16-bit service UUIDs; how scales usually say what they are.
        public static let complete16BitUUIDs: UInt8 = 0x03
        /// Some of the device's 32-bit service UUIDs.
        public static let incomplete32BitUUIDs: UInt8 = 0x04
        /// All of the device's 32-bit service UUIDs.
        public static let complete32BitUUIDs: UInt8 = 0x05
        /// Some of the device's 128-bit service UUIDs.
        public static let incomplete128BitUUIDs: UInt8 = 0x06
        /// All of the device's 128-bit service UUIDs, e.g. a vendor's own service.
        public static let complete128BitUUIDs: UInt8 = 0x07
        /// A name cut to fit; a complete name in the same data wins over it.
        public static let shortenedLocalName: UInt8 = 0x08
        /// The device's full name.
        public static let completeLocalName: UInt8 = 0x09
        /// The transmit power in dBm, signed, for estimating path loss.
        public static let txPowerLevel: UInt8 = 0x0A
        /// Service data under a 16-bit UUID, e.g. a broadcast weight reading.
        public static let serviceData16: UInt8 = 0x16
        /// Service data under a 32-bit UUID.
        public static let serviceData32: UInt8 = 0x20
        /// Service data under a 128-bit UUID.
        public static let serviceData128: UInt8 = 0x21
        /// Vendor data after a 16-bit company identifier (little-endian).
        public static let manufacturerSpecific: UInt8 = 0xFF
    }

    /// Reads the structures listed in `ADType`; others are skipped. A zero length byte ends the
    /// data (what follows is padding). A structure running past the end, a UUID list that is not
    /// a whole number of UUIDs, or a field too short for its type is malformed. Both UUID list
    /// kinds (complete and incomplete) go into `serviceUUIDs`; a complete name wins over a
    /// shortened one; names that are not valid UTF-8 are repaired, not refused.
    public static func parse(_ bytes: [UInt8], connectable: Bool = true) throws(HCIParseError) -> Advertisement {
        var ad = Advertisement(connectable: connectable)
        var seenCompleteName = false
        var r = PacketReader(bytes, context: "advertising data")
        while !r.isAtEnd {
            let length = Int(try r.u8("AD length"))
            if length == 0 { break }
            guard length - 1 < r.remaining else {
                throw .malformed("advertising data: a structure of \(length) bytes runs past the end (\(r.remaining) left)")
            }
            let type = try r.u8("AD type")
            let field = try r.bytes(length - 1, "AD data")
            switch type {
            case ADType.flags:
                guard let flags = field.first else { throw .malformed("advertising data: empty Flags") }
                ad.flags = flags
            case ADType.incomplete16BitUUIDs, ADType.complete16BitUUIDs:
                try addUUIDs(field, size: 2, to: &ad)
            case ADType.incomplete32BitUUIDs, ADType.complete32BitUUIDs:
                try addUUIDs(field, size: 4, to: &ad)
            case ADType.incomplete128BitUUIDs, ADType.complete128BitUUIDs:
                try addUUIDs(field, size: 16, to: &ad)
            case ADType.shortenedLocalName:
                if !seenCompleteName {
                    ad.localName = String(decoding: field, as: UTF8.self)
                    ad.nameIsComplete = false
                }
            case ADType.completeLocalName:
                ad.localName = String(decoding: field, as: UTF8.self)
                ad.nameIsComplete = true
                seenCompleteName = true
            case ADType.txPowerLevel:
                guard field.count == 1 else { throw .malformed("advertising data: TX Power Level of \(field.count) bytes") }
                ad.txPower = Int8(bitPattern: field[0])
            case ADType.serviceData16:
                try addServiceData(field, uuidSize: 2, to: &ad)
            case ADType.serviceData32:
                try addServiceData(field, uuidSize: 4, to: &ad)
            case ADType.serviceData128:
                try addServiceData(field, uuidSize: 16, to: &ad)
            case ADType.manufacturerSpecific:
                guard field.count >= 2 else {
                    throw .malformed("advertising data: manufacturer data of \(field.count) bytes has no company identifier")
                }
                ad.manufacturerData[UInt16(field[0]) | UInt16(field[1]) << 8] = Array(field[2...])
            default:
                continue
            }
        }
        return ad
    }

    private static func addUUIDs(_ field: [UInt8], size: Int, to ad: inout Advertisement) throws(HCIParseError) {
        guard field.count % size == 0 else {
            throw .malformed("advertising data: a list of \(size)-byte UUIDs has \(field.count) bytes")
        }
        for start in stride(from: 0, to: field.count, by: size) {
            guard let uuid = BluetoothUUID(littleEndian: field[start..<start + size]) else { continue }
            if !ad.serviceUUIDs.contains(uuid) { ad.serviceUUIDs.append(uuid) }
        }
    }

    private static func addServiceData(_ field: [UInt8], uuidSize: Int, to ad: inout Advertisement) throws(HCIParseError) {
        guard field.count >= uuidSize, let uuid = BluetoothUUID(littleEndian: field[0..<uuidSize]) else {
            throw .malformed("advertising data: service data of \(field.count) bytes has no \(uuidSize)-byte UUID")
        }
        ad.serviceData[uuid] = Array(field[uuidSize...])
    }

    /// Writes the advertisement as AD structures: flags, complete UUID lists (16, 32, then 128-bit,
    /// each UUID in its shortest form), service data and manufacturer data in key order, TX power,
    /// then the name. It does not enforce the 31-byte legacy limit: callers decide where data goes.
    /// Structures longer than 254 data bytes cannot be expressed and are left out.
    public static func encode(_ advertisement: Advertisement) -> [UInt8] {
        var out: [UInt8] = []
        func add(_ type: UInt8, _ data: [UInt8]) {
            guard data.count <= 254 else { return }
            out += [UInt8(data.count + 1), type] + data
        }
        if let flags = advertisement.flags { add(ADType.flags, [flags]) }
        let lists = advertisement.serviceUUIDs.map { (uuid: $0, bytes: airBytes($0)) }
        for (size, type) in [(2, ADType.complete16BitUUIDs), (4, ADType.complete32BitUUIDs), (16, ADType.complete128BitUUIDs)] {
            let bytes = lists.filter { $0.bytes.count == size }.flatMap(\.bytes)
            if !bytes.isEmpty { add(type, bytes) }
        }
        for (uuid, data) in advertisement.serviceData.sorted(by: { $0.key < $1.key }) {
            let uuidBytes = airBytes(uuid)
            let type = switch uuidBytes.count {
            case 2: ADType.serviceData16
            case 4: ADType.serviceData32
            default: ADType.serviceData128
            }
            add(type, uuidBytes + data)
        }
        for (company, data) in advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) {
            add(ADType.manufacturerSpecific, LittleEndian.u16(company) + data)
        }
        if let txPower = advertisement.txPower { add(ADType.txPowerLevel, [UInt8(bitPattern: txPower)]) }
        if let name = advertisement.localName {
            add(advertisement.nameIsComplete ? ADType.completeLocalName : ADType.shortenedLocalName, Array(name.utf8))
        }
        return out
    }

    /// 2, 4 or 16 little-endian bytes: the shortest alias of the Bluetooth Base UUID that fits.
    private static func airBytes(_ uuid: BluetoothUUID) -> [UInt8] {
        if uuid.shortValue != nil { return uuid.littleEndianBytes }
        let base = BluetoothUUID(0).bytes
        if uuid.bytes.count == 16, Array(uuid.bytes[4...]) == Array(base[4...]) {
            return uuid.bytes[0..<4].reversed()
        }
        return uuid.littleEndianBytes
    }
}
