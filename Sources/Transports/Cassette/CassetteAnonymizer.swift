import BLEProtocol
import HAL

/// `--anonymize`: a cassette that can be attached to a bug report. Peripheral addresses, local
/// names (in advertising data and the Device Name characteristic) and serial numbers (the Serial
/// Number String characteristic) are replaced; the same original always gets the same
/// replacement within the cassette, so the session still reads as one (the name a device
/// advertised and the one read from it stay equal).
///
/// Replacements keep each value's length (the AD structures and ATT PDUs around them stay valid,
/// and a replay's MTU arithmetic is unchanged) and an address its type bits (a static random
/// address stays static). Driver matching is unaffected for the drivers here (none matches by
/// name or address).
///
/// An address also hides in values (issue 27, item 5): many vendors put it in their manufacturer
/// data (least significant byte first, as on air), Xiaomi in its service data (most significant
/// first), and System ID (0x2A23) is commonly made from it. Every recorded advertisement and ATT
/// value is searched for each peripheral's address in either byte order and given the
/// replacement in the same order, and System ID values are replaced whole. What a profile keeps in
/// its manufacturer data (the mirror's serial) is named by ``ManufacturerField`` rules the caller
/// gives, from the drivers that know those layouts.
public struct CassetteAnonymizer {
    /// A field of identifying bytes inside one company's manufacturer data: the bytes at `range`
    /// (counted after the two company-ID bytes) when the data begins with `prefix`.
    public struct ManufacturerField: Sendable, Hashable {
        public var companyID: UInt16
        public var prefix: [UInt8]
        public var range: Range<Int>

        public init(companyID: UInt16, prefix: [UInt8], range: Range<Int>) {
            self.companyID = companyID
            self.prefix = prefix
            self.range = range
        }
    }

    /// The manufacturer-data fields replaced as serial numbers.
    public var manufacturerFields: [ManufacturerField] = []
    private var fieldValues: [[UInt8]: [UInt8]] = [:]
    private var addresses: [BLEAddress: BLEAddress] = [:]
    /// Pads' serials that are Bluetooth addresses but no peripheral's.
    private var padAddresses: [[UInt8]: BLEAddress] = [:]
    private var names: [[UInt8]: [UInt8]] = [:]
    private var serials: [[UInt8]: [UInt8]] = [:]

    /// An anonymizer with no replacements yet; reuse one to keep replacements consistent across calls.
    public init(manufacturerFields: [ManufacturerField] = []) {
        self.manufacturerFields = manufacturerFields
    }

    /// The cassette with its identifying values replaced.
    public static func anonymize(_ cassette: BLECassette, manufacturerFields: [ManufacturerField] = []) -> BLECassette {
        var anonymizer = CassetteAnonymizer(manufacturerFields: manufacturerFields)
        return anonymizer.anonymize(cassette)
    }

    /// Replaces identifying values in `cassette`, remembering each replacement for later calls.
    public mutating func anonymize(_ cassette: BLECassette) -> BLECassette {
        // Replacements numbered in the writer's order, so the same session anonymizes the same way.
        let ordered = cassette.peripherals.sorted { CassetteFormat.order($0.address, $1.address) }
        for (index, peripheral) in ordered.enumerated() { addresses[peripheral.address] = Self.address(index + 1, like: peripheral.address) }
        // Resolved identities next (one device's private addresses share one), numbered after them.
        let identities = Set(ordered.compactMap(\.identity)).filter { addresses[$0] == nil }.sorted { CassetteFormat.order($0, $1) }
        for (index, identity) in identities.enumerated() { addresses[identity] = Self.address(ordered.count + index + 1, like: identity) }
        var result = cassette
        for index in result.peripherals.indices {
            var peripheral = result.peripherals[index]
            peripheral.address = addresses[peripheral.address] ?? peripheral.address
            peripheral.identity = peripheral.identity.map { addresses[$0] ?? $0 }
            for record in peripheral.advertising.indices {
                peripheral.advertising[record].data = advertisingData(peripheral.advertising[record].data)
            }
            let handles = Self.identifyingHandles(peripheral)
            for connection in peripheral.connections.indices {
                peripheral.connections[connection].att = att(peripheral.connections[connection].att, handles: handles)
            }
            result.peripherals[index] = peripheral
        }
        // Last, every address left inside a value, whichever peripheral's value holds it.
        let patterns = addresses.flatMap { original, replacement in
            [(original.bytes, replacement.bytes), (Array(original.bytes.reversed()), Array(replacement.bytes.reversed()))]
        }
        for index in result.peripherals.indices {
            for record in result.peripherals[index].advertising.indices {
                result.peripherals[index].advertising[record].data = Self.replacing(patterns, in: result.peripherals[index].advertising[record].data)
            }
            for connection in result.peripherals[index].connections.indices {
                for record in result.peripherals[index].connections[connection].att.indices {
                    let pdu = result.peripherals[index].connections[connection].att[record].pdu
                    guard pdu.count > 1 else { continue }
                    result.peripherals[index].connections[connection].att[record].pdu = [pdu[0]] + Self.replacing(patterns, in: Array(pdu.dropFirst()))
                }
            }
        }
        return result
    }

    /// `00:00:00:00:00:01` for the first device by address, and so on; a random address keeps
    /// its two top bits (the random address sub-type: static, resolvable, non-resolvable).
    static func address(_ number: Int, like original: BLEAddress) -> BLEAddress {
        let first = original.kind == .random ? (original.bytes.first ?? 0) & 0xC0 : 0
        return BLEAddress(bytes: [first, 0x00, 0x00, 0x00, UInt8((number >> 8) & 0xFF), UInt8(number & 0xFF)], kind: original.kind) ?? original
    }

    /// Every occurrence of each pattern's original replaced by its replacement (same length).
    static func replacing(_ patterns: [([UInt8], [UInt8])], in bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        for (original, replacement) in patterns where original.count == replacement.count && !original.isEmpty && original.count <= out.count {
            var index = 0
            while index + original.count <= out.count {
                if out[index..<(index + original.count)].elementsEqual(original) {
                    out.replaceSubrange(index..<(index + original.count), with: replacement)
                    index += original.count
                } else {
                    index += 1
                }
            }
        }
        return out
    }

    /// The value handles of Device Name (0x2A00), Serial Number String (0x2A25) and System ID
    /// (0x2A23, replaced as a serial), from the recorded discovery.
    static func identifyingHandles(_ peripheral: BLECassette.Peripheral) -> (names: Set<UInt16>, serials: Set<UInt16>) {
        let found = peripheral.valueHandles(of: [BluetoothUUID(0x2A00), BluetoothUUID(0x2A25), BluetoothUUID(0x2A23)])
        return (found[BluetoothUUID(0x2A00)] ?? [], (found[BluetoothUUID(0x2A25)] ?? []).union(found[BluetoothUUID(0x2A23)] ?? []))
    }

    private mutating func advertisingData(_ data: [UInt8]) -> [UInt8] {
        var out = data
        var index = 0
        // AD structures: length, type, value (Core Supplement Part A §1).
        while index < data.count {
            let length = Int(data[index])
            guard length > 0, index + 1 + length <= data.count else { break }
            let type = data[index + 1]
            if type == 0x08 || type == 0x09 {
                let range = (index + 2)..<(index + 1 + length)
                out.replaceSubrange(range, with: name(Array(data[range])))
            } else if type == 0xFF, length >= 3 {
                // Manufacturer data: company ID (little-endian), then the company's bytes.
                let company = UInt16(data[index + 2]) | UInt16(data[index + 3]) << 8
                let body = (index + 4)..<(index + 1 + length)
                let value = Array(data[body])
                for field in manufacturerFields where field.companyID == company && value.starts(with: field.prefix) && field.range.upperBound <= value.count {
                    let range = (body.lowerBound + field.range.lowerBound)..<(body.lowerBound + field.range.upperBound)
                    out.replaceSubrange(range, with: fieldValue(Array(data[range])))
                }
            }
            index += 1 + length
        }
        return out
    }

    private mutating func att(_ records: [BLECassette.ATTRecord], handles: (names: Set<UInt16>, serials: Set<UInt16>)) -> [BLECassette.ATTRecord] {
        var out = records
        var pendingRead: UInt16?
        for index in records.indices {
            let pdu = records[index].pdu
            guard let opcode = pdu.first else { continue }
            if records[index].direction == .toPeripheral {
                if opcode == ATTPDU.Opcode.readRequest, pdu.count == 3 {
                    pendingRead = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
                } else if ATTPDU.responseOpcode(forRequest: opcode) != nil {
                    pendingRead = nil
                }
                continue
            }
            guard opcode == ATTPDU.Opcode.readResponse, let handle = pendingRead else { continue }
            pendingRead = nil
            let value = Array(pdu.dropFirst())
            if handles.names.contains(handle) {
                out[index].pdu = [opcode] + name(value)
            } else if handles.serials.contains(handle) {
                out[index].pdu = [opcode] + serial(value)
            }
        }
        return out
    }

    /// `device-1`, `device-2`… (`d1`, `d2`… in a short name) padded with `-` to the original's length.
    private mutating func name(_ original: [UInt8]) -> [UInt8] {
        if let known = names[original] { return known }
        let number = names.count + 1
        let text = original.count >= 9 ? "device-\(number)" : "d\(number)"
        let replacement = Self.fit(Array(text.utf8), length: original.count, pad: UInt8(ascii: "-"))
        names[original] = replacement
        return replacement
    }

    /// A manufacturer-data serial: `00 00 00 01`, `00 00 00 02`… (binary) in the original's length.
    private mutating func fieldValue(_ original: [UInt8]) -> [UInt8] {
        if let known = fieldValues[original] { return known }
        var number = fieldValues.count + 1
        var replacement = [UInt8](repeating: 0, count: original.count)
        for index in replacement.indices.reversed() {
            replacement[index] = UInt8(number & 0xFF)
            number >>= 8
        }
        fieldValues[original] = replacement
        return replacement
    }

    /// `0000001`, `0000002`… in the original's length.
    mutating func serial(_ original: [UInt8]) -> [UInt8] {
        if let known = serials[original] { return known }
        let digits = Array(String(serials.count + 1).utf8)
        let replacement = Array(([UInt8](repeating: UInt8(ascii: "0"), count: max(0, original.count - digits.count)) + digits).suffix(original.count))
        serials[original] = replacement
        return replacement
    }

    private static func fit(_ text: [UInt8], length: Int, pad: UInt8) -> [UInt8] {
        text.count >= length ? Array(text.prefix(length)) : text + [UInt8](repeating: pad, count: length - text.count)
    }
}

extension CassetteAnonymizer {
    /// The whole cassette anonymized (`--anonymize`): the BLE peripherals as above, each camera's
    /// bus info (`bus-1`, `bus-2`… in the order the writer writes the cameras) and each pad's
    /// serial number. A pad serial that is a Bluetooth address (evdev's `uniq` of a wireless pad)
    /// gets the same replacement as that address has among the peripherals, else one of its own
    /// (`00:00:00:00:01:01`…); any other serial gets digits of its length, as the BLE serial
    /// numbers do. Card, driver and format names stay: they say what model the device is, not
    /// which one.
    public static func anonymize(_ cassette: Cassette, manufacturerFields: [ManufacturerField] = []) -> Cassette {
        var anonymizer = CassetteAnonymizer(manufacturerFields: manufacturerFields)
        var result = cassette
        result.ble = anonymizer.anonymize(cassette.ble)
        var buses: [String: String] = [:]
        var files = 0
        for index in result.cameras.indices.sorted(by: { result.cameras[$0].info.uri < result.cameras[$1].info.uri }) {
            // A video file's path (and its name, the card) can name the person or the backup:
            // `file:camera-1.y4m` instead; a device node says nothing about whose it is.
            if result.cameras[index].info.uri.hasPrefix("file:") {
                files += 1
                let query = result.cameras[index].info.uri.firstIndex(of: "?").map { String(result.cameras[index].info.uri[$0...]) } ?? ""
                result.cameras[index].info.uri = "file:camera-\(files).y4m" + query
                result.cameras[index].info.card = "camera-\(files).y4m"
            }
            guard let bus = result.cameras[index].busInfo else { continue }
            let replacement = buses[bus] ?? "bus-\(buses.count + 1)"
            buses[bus] = replacement
            result.cameras[index].busInfo = replacement
        }
        var padAddresses = 0
        for index in result.pads.indices.sorted(by: { result.pads[$0].uri < result.pads[$1].uri }) {
            guard let serial = result.pads[index].serial else { continue }
            if let address = BLEAddress(string: serial, defaultKind: .public) {
                let known = anonymizer.addresses.first { $0.key.bytes == address.bytes }?.value
                let replacement = known ?? anonymizer.padAddresses[address.bytes] ?? {
                    padAddresses += 1
                    return BLEAddress(bytes: [0, 0, 0, 0, 0x01, UInt8(padAddresses & 0xFF)], kind: .public) ?? address
                }()
                anonymizer.padAddresses[address.bytes] = replacement
                // The serial's own spelling (case) is the address's.
                let text = replacement.description
                result.pads[index].serial = serial == serial.lowercased() ? text.lowercased() : text
            } else {
                result.pads[index].serial = String(decoding: anonymizer.serial(Array(serial.utf8)), as: UTF8.self)
            }
        }
        return result
    }
}
