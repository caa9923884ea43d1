import Foundation
import BLEProtocol
import HAL
import LinuxIO

/// Reads a cassette's text (docs/cassette-format.md) into a `BLECassette`, trusting nothing:
/// the file's size, each line's length, every count, length, handle, time and address is checked
/// before it is used, and the first thing wrong is reported with its line number and what was
/// expected there. A major version newer than ours is refused; a newer minor version is read,
/// skipping the records (and device kinds) it added.
public struct CassetteReader {
    private var cassette = BLECassette()
    /// The camera and pad sections (format 1.1), with the section being read.
    var media = MediaSections()
    private var lineNumber = 0
    private var records = 0
    private var fileMinor = 0
    private var ended = false
    /// The device section being read; nil before the first one, or in a section of a kind this
    /// version does not know (a newer minor version's), which is skipped.
    private var current: Int?
    private var skippingSection = false
    private var connectionOpen = false

    /// The BLE part of the cassette at `path`; camera and pad sections are read and checked, then left out.
    public static func read(path: String) throws(CassetteError) -> BLECassette {
        try readAll(path: path).ble
    }

    /// Every section of the cassette at `path`: its BLE peripherals, cameras and pads.
    public static func readAll(path: String) throws(CassetteError) -> Cassette {
        // Opened without blocking and only as a regular file: `replay:` of a FIFO used to hang in
        // open(2) for ever, where no signal could end it.
        let fd: FileDescriptor
        do { fd = try FileDescriptor.openChecked(path, expecting: .regularFile(orPipe: false)) } catch {
            switch error {
            case .failed(_, let errno) where errno == .noEntry: throw .cannotRead(path: path, reason: "no such file")
            case .failed(_, let errno) where errno.meansPermission: throw .cannotRead(path: path, reason: "permission denied")
            case .failed(_, let errno): throw .cannotRead(path: path, reason: errno.description)
            case .wrongKind(_, let found, _): throw .cannotRead(path: path, reason: "it is \(found), not a regular file: give the cassette file itself")
            }
        }
        defer { fd.close() }
        // One byte more than allowed tells a file that is too long without reading all of it.
        let limit = CassetteFormat.maximumBytes + 1
        // A file known to be too large says its own size (not the limit plus one) and is not read.
        if let size = fd.bytesLeftInFile(), size >= limit { throw .tooLarge(bytes: size, limit: CassetteFormat.maximumBytes) }
        var bytes = [UInt8](repeating: 0, count: min(limit, fd.bytesLeftInFile() ?? limit))
        var filled = 0
        while filled < limit {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: min(limit, bytes.count + 4096) - bytes.count)) }
            let start = filled
            let read = bytes.withUnsafeMutableBytes { raw -> Result<Int, Errno> in
                do throws(Errno) { return .success(try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))) } catch {
                    return .failure(error)
                }
            }
            let count: Int
            switch read {
            case .success(let n): count = n
            case .failure(let error): throw .cannotRead(path: path, reason: error.description)
            }
            if count == 0 { break }
            filled += count
        }
        return try readAll(Array(bytes[..<filled]))
    }

    /// The BLE part of a cassette's text, for tests and tools that hold the bytes already.
    public static func read(_ bytes: [UInt8]) throws(CassetteError) -> BLECassette {
        try readAll(bytes).ble
    }

    /// Every section of a cassette's text: its BLE peripherals, cameras and pads.
    public static func readAll(_ bytes: [UInt8]) throws(CassetteError) -> Cassette {
        guard bytes.count <= CassetteFormat.maximumBytes else { throw .tooLarge(bytes: bytes.count, limit: CassetteFormat.maximumBytes) }
        var reader = CassetteReader()
        var start = 0
        while start < bytes.count {
            let newline = bytes[start...].firstIndex(of: 0x0A)
            let end = newline ?? bytes.count
            guard end - start <= CassetteFormat.maximumLineLength else {
                throw .damaged(line: reader.lineNumber + 1, expected: "a line of at most \(CassetteFormat.maximumLineLength) characters",
                               found: "a line of \(end - start)")
            }
            try reader.line(bytes[start..<end])
            start = end + 1
        }
        guard reader.lineNumber > 0 else { throw .notACassette(found: "") }
        guard reader.ended else { throw .cutShort(lines: reader.lineNumber) }
        return Cassette(ble: reader.cassette, cameras: reader.media.cameras, pads: reader.media.pads)
    }

    private mutating func line(_ raw: ArraySlice<UInt8>) throws(CassetteError) {
        lineNumber += 1
        if lineNumber == 1 { return try header(raw) }
        if raw.isEmpty || raw.first == UInt8(ascii: "#") { return }
        guard !ended else { throw damaged("nothing after the `end` line", String(decoding: raw, as: UTF8.self)) }
        // Record lines are printable ASCII words separated by single spaces.
        guard raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw damaged("printable ASCII (a record line has no tabs, control characters or UTF-8)", String(decoding: raw, as: UTF8.self))
        }
        let text = String(decoding: raw, as: UTF8.self)
        let words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard !words.contains(where: \.isEmpty) else { throw damaged("words separated by single spaces", text) }
        records += 1
        let keyword = words[0]
        if keyword == "end" { return try endLine(words, text) }
        if keyword == "device" { return try device(words, text) }
        if skippingSection { return }
        if media.section != nil { return try media.record(words, text, line: lineNumber, fileIsNewer: fileMinor > CassetteFormat.minor) }
        if fileMinor >= 2, ["pairing", "pairing-failed", "encrypted"].contains(keyword) { return try security(words, text) }
        if fileMinor >= 3, keyword == "resolved" { return try resolved(words, text) }
        switch keyword {
        case "adv": try advertising(words, text)
        case "connection": try connection(words, text)
        case "att": try att(words, text)
        case "disconnect": try disconnect(words, text)
        case "varying": try varying(words, text)
        case "service", "characteristic", "descriptor", "value": try summary(words, text)
        default:
            // A record a newer minor version added: skipped, as the format promises.
            if fileMinor > CassetteFormat.minor { return }
            throw damaged("a record (device, resolved, adv, connection, att, disconnect, pairing, pairing-failed, encrypted, varying, service, characteristic, descriptor, value or end)", text)
        }
    }

    private mutating func header(_ raw: ArraySlice<UInt8>) throws(CassetteError) {
        let text = String(decoding: raw.prefix(80), as: UTF8.self)
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 2, words[0] == CassetteFormat.magic else { throw .notACassette(found: text) }
        let version = words[1].split(separator: ".", omittingEmptySubsequences: false)
        guard version.count == 2, let major = Self.decimal(version[0], digits: 4), let minor = Self.decimal(version[1], digits: 4) else {
            throw .damaged(line: 1, expected: "a version MAJOR.MINOR such as \(CassetteFormat.major).\(CassetteFormat.minor)", found: text)
        }
        guard major <= CassetteFormat.major else { throw .newerVersion(found: String(words[1])) }
        guard major == CassetteFormat.major else {
            throw .damaged(line: 1, expected: "format \(CassetteFormat.major).x (there was never a format \(major))", found: text)
        }
        fileMinor = minor
    }

    private mutating func endLine(_ words: [String], _ text: String) throws(CassetteError) {
        guard words.count == 2, let count = Self.decimal(Substring(words[1]), digits: 9) else {
            throw damaged("`end COUNT`", text)
        }
        // `end` itself is not counted.
        guard count == records - 1 else {
            throw damaged("`end \(records - 1)` (the records above it; some are missing or were added)", text)
        }
        try media.close(line: lineNumber)
        ended = true
    }

    private mutating func device(_ words: [String], _ text: String) throws(CassetteError) {
        guard words.count >= 2 else { throw damaged("`device KIND …`", text) }
        connectionOpen = false
        try media.close(line: lineNumber)
        // Cameras and pads came with 1.1; in a 1.0 file they are damage like any unknown kind.
        if (words[1] == "camera" || words[1] == "pad") && fileMinor >= 1 {
            skippingSection = false
            current = nil
            return try media.device(words, text, line: lineNumber)
        }
        guard words[1] == "ble" else {
            // A kind a newer minor version added (a camera, a pad): its section is skipped.
            if fileMinor > CassetteFormat.minor {
                skippingSection = true
                current = nil
                return
            }
            throw damaged(fileMinor >= 1 ? "a device kind this version knows (ble, camera, pad)" : "a device kind format 1.0 knows (ble)", text)
        }
        skippingSection = false
        guard words.count == 4, let kind = BLEAddress.Kind(rawValue: words[3]),
              let address = BLEAddress(string: words[2], defaultKind: kind), !words[2].contains("/") else {
            throw damaged("`device ble AA:BB:CC:DD:EE:FF public|random`", text)
        }
        guard cassette.peripheral(address) == nil else { throw damaged("each device once (\(address) \(kind.rawValue) came before)", text) }
        guard cassette.peripherals.count < BLECassette.Limits.peripherals else {
            throw .tooMany(line: lineNumber, what: "devices", limit: BLECassette.Limits.peripherals)
        }
        cassette.peripherals.append(BLECassette.Peripheral(address: address))
        current = cassette.peripherals.count - 1
    }

    private func inDevice(_ text: String) throws(CassetteError) -> Int {
        guard let current else { throw damaged("a `device` line before the device's records", text) }
        return current
    }

    private mutating func advertising(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try inDevice(text)
        guard words.count == 5 else { throw damaged("`adv SECONDS KIND RSSI HEX`", text) }
        let at = try time(words[1], text)
        guard let kind = BLECassette.AdvertisingKind(rawValue: words[2]) else {
            throw damaged("an advertising kind (" + BLECassette.AdvertisingKind.allCases.map(\.rawValue).joined(separator: ", ") + ")", text)
        }
        guard let rssi = Int8(words[3]) else { throw damaged("an RSSI in dBm from -128 to 127", text) }
        let data = try hex(words[4], atMost: kind.maximumData, allowEmpty: true, what: "advertising data", text)
        // In place: a copy of the device taken here would share its record list, and the append
        // would then copy the whole list on every `adv` line (quadratic in the device's records).
        guard cassette.peripherals[index].connections.isEmpty else { throw damaged("a device's `adv` records before its connections", text) }
        if let last = cassette.peripherals[index].advertising.last, at < last.at {
            throw damaged("times that do not run backwards (the last `adv` was at \(CassetteFormat.time(last.at)))", text)
        }
        guard cassette.peripherals[index].advertising.count < BLECassette.Limits.advertisingRecords else {
            throw .tooMany(line: lineNumber, what: "advertising records for one device", limit: BLECassette.Limits.advertisingRecords)
        }
        cassette.peripherals[index].advertising.append(BLECassette.AdvertisingRecord(at: at, kind: kind, rssi: rssi, data: data))
    }

    private mutating func connection(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try inDevice(text)
        guard words.count == 2 else { throw damaged("`connection SECONDS`", text) }
        let at = try time(words[1], text)
        if let last = cassette.peripherals[index].connections.last, at < last.at {
            throw damaged("connections in time order (the last began at \(CassetteFormat.time(last.at)))", text)
        }
        guard cassette.peripherals[index].connections.count < BLECassette.Limits.connections else {
            throw .tooMany(line: lineNumber, what: "connections to one device", limit: BLECassette.Limits.connections)
        }
        cassette.peripherals[index].connections.append(BLECassette.Connection(at: at))
        connectionOpen = true
    }

    private func openConnection(_ text: String) throws(CassetteError) -> Int {
        let index = try inDevice(text)
        guard connectionOpen, cassette.peripherals[index].connections.last != nil else {
            throw damaged("a `connection` line before its `att` and `disconnect` records", text)
        }
        return index
    }

    private mutating func att(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try openConnection(text)
        guard words.count == 4 else { throw damaged("`att SECONDS >|< HEX`", text) }
        let at = try time(words[1], text)
        guard let direction = BLECassette.Direction(rawValue: words[2]) else {
            throw damaged("a direction: `>` (to the peripheral) or `<` (from it)", text)
        }
        let pdu = try hex(words[3], atMost: BLECassette.Limits.attPDUBytes, allowEmpty: false, what: "an ATT PDU", text)
        var connection = cassette.peripherals[index].connections.removeLast()
        defer { cassette.peripherals[index].connections.append(connection) }
        if let last = connection.att.last, at < last.at {
            throw damaged("times that do not run backwards (the last `att` was at \(CassetteFormat.time(last.at)))", text)
        }
        guard connection.att.count < BLECassette.Limits.attRecords else {
            throw .tooMany(line: lineNumber, what: "ATT records in one connection", limit: BLECassette.Limits.attRecords)
        }
        connection.att.append(BLECassette.ATTRecord(at: at, direction: direction, pdu: pdu))
    }

    /// `pairing SECONDS METHOD sc|legacy DEVICE-KEYS HOST-KEYS`, `pairing-failed SECONDS 0xRR`,
    /// `encrypted SECONDS` (1.2): times from the connection's start, in order among themselves.
    private mutating func security(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try openConnection(text)
        let event: BLECassette.SecurityRecord.Event
        switch words[0] {
        case "pairing":
            func keys(_ word: String) -> [String]? {
                if word == "-" { return [] }
                let kinds = word.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                return kinds.count <= 8 && kinds.allSatisfy(BLECassette.SecurityRecord.keyKinds.contains) ? kinds : nil
            }
            guard words.count == 6, ["just-works", "passkey", "numeric-comparison"].contains(words[2]),
                  words[3] == "sc" || words[3] == "legacy", let device = keys(words[4]), let host = keys(words[5]) else {
                throw damaged("`pairing SECONDS just-works|passkey|numeric-comparison sc|legacy KEYS KEYS` (keys: "
                              + BLECassette.SecurityRecord.keyKinds.joined(separator: ",") + ", or -)", text)
            }
            event = .pairing(method: words[2], secureConnections: words[3] == "sc", deviceKeys: device, hostKeys: host)
        case "pairing-failed":
            guard words.count == 3, let reason = Self.hexNumber(words[2], digits: 2) else {
                throw damaged("`pairing-failed SECONDS 0xREASON`", text)
            }
            event = .pairingFailed(reason: UInt8(reason))
        default:
            guard words.count == 2 else { throw damaged("`encrypted SECONDS`", text) }
            event = .encrypted
        }
        let at = try time(words[1], text)
        let count = cassette.peripherals[index].connections.count
        if let last = cassette.peripherals[index].connections[count - 1].security.last, at < last.at {
            throw damaged("times that do not run backwards (the last security record was at \(CassetteFormat.time(last.at)))", text)
        }
        guard cassette.peripherals[index].connections[count - 1].security.count < BLECassette.Limits.securityRecords else {
            throw .tooMany(line: lineNumber, what: "security records in one connection", limit: BLECassette.Limits.securityRecords)
        }
        cassette.peripherals[index].connections[count - 1].security.append(BLECassette.SecurityRecord(at: at, event: event))
    }

    private mutating func disconnect(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try openConnection(text)
        guard words.count == 4, words[2] == "host" || words[2] == "peer" else {
            throw damaged("`disconnect SECONDS host|peer 0xREASON`", text)
        }
        let at = try time(words[1], text)
        guard let reason = Self.hexNumber(words[3], digits: 2) else { throw damaged("an HCI reason such as 0x13", text) }
        let count = cassette.peripherals[index].connections.count
        if let last = cassette.peripherals[index].connections[count - 1].att.last, at < last.at {
            throw damaged("a disconnect after the connection's last `att` (at \(CassetteFormat.time(last.at)))", text)
        }
        cassette.peripherals[index].connections[count - 1].end = BLECassette.Disconnection(at: at, byHost: words[2] == "host",
                                                                                          reason: UInt8(reason))
        connectionOpen = false
    }

    /// `resolved ADDRESS TYPE` (1.3): the identity a device's resolvable private address stood
    /// for. Only a resolvable private address has one, only once, and an identity is public or
    /// static random (Vol 6 Part B §1.3), never another private address.
    private mutating func resolved(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try inDevice(text)
        guard words.count == 3, let kind = BLEAddress.Kind(rawValue: words[2]),
              let identity = BLEAddress(string: words[1], defaultKind: kind), !words[1].contains("/"),
              identity.kind == .public || identity.bytes[0] >> 6 == 0b11 else {
            throw damaged("`resolved AA:BB:CC:DD:EE:FF public|random` (a public or static random identity address)", text)
        }
        guard ResolvablePrivateAddress.isResolvable(cassette.peripherals[index].address) else {
            throw damaged("`resolved` only under a device with a resolvable private address", text)
        }
        guard cassette.peripherals[index].identity == nil else { throw damaged("one `resolved` line per device", text) }
        cassette.peripherals[index].identity = identity
    }

    private mutating func varying(_ words: [String], _ text: String) throws(CassetteError) {
        let index = try inDevice(text)
        guard words.count == 2, let handle = Self.hexNumber(words[1], digits: 4), handle > 0 else {
            throw damaged("`varying 0xHANDLE`", text)
        }
        cassette.peripherals[index].varying.insert(UInt16(handle))
    }

    /// The database lines are derived from the ATT records; they are checked for form only.
    private mutating func summary(_ words: [String], _ text: String) throws(CassetteError) {
        _ = try inDevice(text)
        let handle = words.count > 1 ? Self.hexNumber(words[1], digits: 4) : nil
        let good: Bool
        switch words[0] {
        case "service": good = words.count == 4 && handle != nil && Self.hexNumber(words[2], digits: 4) != nil && BluetoothUUID(string: words[3]) != nil
        case "characteristic": good = words.count == 4 && handle != nil && Self.hexNumber(words[2], digits: 2) != nil && BluetoothUUID(string: words[3]) != nil
        case "descriptor": good = words.count == 3 && handle != nil && BluetoothUUID(string: words[2]) != nil
        default:
            good = words.count == 3 && handle != nil
            if good { _ = try hex(words[2], atMost: 512, allowEmpty: true, what: "a value", text) }
        }
        guard good else { throw damaged("`\(words[0])` with its handle (0x0001), " + (words[0] == "value" ? "and the value in hex" : "and a UUID"), text) }
    }

    // MARK: words

    private func damaged(_ expected: String, _ found: String) -> CassetteError {
        .damaged(line: lineNumber, expected: expected, found: found)
    }

    /// `SECONDS.MICROS`: at most five digits, a point, exactly six digits; below a day.
    func time(_ word: String, _ text: String) throws(CassetteError) -> Duration {
        let parts = word.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 6, let seconds = Self.decimal(parts[0], digits: 5),
              let micros = Self.decimal(parts[1], digits: 6) else {
            throw damaged("a time in seconds with six decimals, such as 1.250000", text)
        }
        let at = Duration.seconds(seconds) + .microseconds(micros)
        guard at < BLECassette.Limits.time else { throw damaged("a time below 86400 seconds (a day)", text) }
        return at
    }

    private func hex(_ word: String, atMost limit: Int, allowEmpty: Bool, what: String, _ text: String) throws(CassetteError) -> [UInt8] {
        if word == "-" {
            guard allowEmpty else { throw damaged("\(what) of at least one byte", text) }
            return []
        }
        let digits = Array(word.utf8)
        guard digits.count % 2 == 0 else { throw damaged("\(what) in hex, two digits a byte (found an odd number of digits)", text) }
        guard digits.count / 2 <= limit else { throw damaged("\(what) of at most \(limit) bytes (found \(digits.count / 2))", text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else {
                throw damaged("\(what) in lower-case hex (0-9, a-f)", text)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// A lower-case hex digit's value: the format writes bytes in lower case only.
    private static func nibble(_ digit: UInt8) -> UInt8? {
        (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(digit) ? nil : Hex.nibble(digit)
    }

    /// Decimal digits only (no sign, no spaces), at most `digits` of them.
    static func decimal(_ word: Substring, digits: Int) -> Int? {
        guard !word.isEmpty, word.count <= digits, word.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(word)
    }

    /// `0x` and exactly `digits` hex digits (either case).
    static func hexNumber(_ word: String, digits: Int) -> Int? {
        guard word.hasPrefix("0x"), word.count == digits + 2 else { return nil }
        let body = word.dropFirst(2)
        guard body.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }) else { return nil }
        return Int(body, radix: 16)
    }
}
