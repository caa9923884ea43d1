import Foundation
import HAL
import LinuxIO
import Peripherals
import Transports

/// `serve profile:FILE`: a device described in JSON (docs/serve-profile.md), read and checked
/// before anything is advertised. Every outside size is checked: the file (at most 1 MiB), each
/// value (512 bytes), the advertising data (31 bytes per legacy PDU, 1650 extended), the number
/// of services and characteristics (the database's 16-bit handles).
struct ServeProfileFile: Sendable {
    static let maximumBytes = 1 << 20

    struct Document: Decodable {
        struct Advertising: Decodable {
            var form: String?
            var intervalMs: Int?
            var connectable: Bool?
            var flags: UInt8?
            var serviceUUIDs: [String]?
            var manufacturerData: [String: String]?
            var serviceData: [String: String]?
            var data: String?
            var scanResponse: String?
        }

        struct Characteristic: Decodable {
            var uuid: String
            var properties: [String]
            var value: String?
            var text: String?
            var security: Security?
            var descriptors: [Descriptor]?
        }

        struct Security: Decodable {
            var read: String?
            var write: String?
        }

        struct Descriptor: Decodable {
            var uuid: String
            var value: String?
            var text: String?
        }

        struct Service: Decodable {
            var uuid: String
            var characteristics: [Characteristic]
        }

        var name: String
        var address: String?
        var appearance: UInt16?
        var advertising: Advertising?
        var services: [Service]
    }

    let name: String
    let address: BLEAddress
    let advertising: VirtualAdvertising
    let appearance: UInt16
    let services: [ProfilePeripheral.Service]

    func peripheral(name override: String?) -> ProfilePeripheral {
        ProfilePeripheral(address: address, advertising: advertising, name: override ?? name, appearance: appearance, services: services)
    }

    static func read(_ path: String) throws(CLIFailure) -> ServeProfileFile {
        let bytes = try readBytes(path)
        let document: Document
        do {
            let decoder = JSONDecoder()
            document = try decoder.decode(Document.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, context) {
            throw invalid(path, "\(where: context.codingPath) has no \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw invalid(path, "\(where: context.codingPath): \(context.debugDescription)")
        } catch {
            throw invalid(path, "it is not a JSON profile (\(error.localizedDescription))")
        }
        return try ServeProfileFile(document, path: path)
    }

    init(_ document: Document, path: String) throws(CLIFailure) {
        name = document.name
        appearance = document.appearance ?? 0
        if let text = document.address {
            guard let parsed = BLEAddress(string: text, defaultKind: .random) else { throw Self.invalid(path, "address \(text) is no Bluetooth address") }
            address = parsed
        } else {
            // A static random address made from the name, so the same file advertises the same address.
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in document.name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            let bytes = (0..<6).map { UInt8(truncatingIfNeeded: hash >> (8 * $0)) }
            guard let made = BLEAddress(bytes: [bytes[0] | 0xC0] + bytes[1...], kind: .random) else {
                throw Self.invalid(path, "no address could be made for it: give \"address\"")
            }
            address = made
        }
        guard document.services.count <= 256 else { throw Self.invalid(path, "more than 256 services") }
        var services: [ProfilePeripheral.Service] = []
        var characteristicCount = 0
        for service in document.services {
            guard let uuid = BluetoothUUID(string: service.uuid) else { throw Self.invalid(path, "service uuid \(service.uuid) is no UUID") }
            var characteristics: [ProfilePeripheral.Characteristic] = []
            for characteristic in service.characteristics {
                characteristicCount += 1
                guard characteristicCount <= 4096 else { throw Self.invalid(path, "more than 4096 characteristics") }
                characteristics.append(try Self.characteristic(characteristic, path: path))
            }
            services.append(ProfilePeripheral.Service(uuid: uuid, characteristics: characteristics))
        }
        self.services = services
        advertising = try Self.advertising(document.advertising, name: document.name, services: services, path: path)
    }

    private static func characteristic(_ c: Document.Characteristic, path: String) throws(CLIFailure) -> ProfilePeripheral.Characteristic {
        guard let uuid = BluetoothUUID(string: c.uuid) else { throw invalid(path, "characteristic uuid \(c.uuid) is no UUID") }
        var properties = CharacteristicProperties()
        for word in c.properties {
            switch word {
            case "read": properties.insert(.read)
            case "write": properties.insert(.write)
            case "write-without-response": properties.insert(.writeWithoutResponse)
            case "notify": properties.insert(.notify)
            case "indicate": properties.insert(.indicate)
            default: throw invalid(path, "characteristic \(c.uuid): \(word) is no property (read, write, write-without-response, notify, indicate)")
            }
        }
        let value = try bytes(c.value, text: c.text, what: "characteristic \(c.uuid)", path: path)
        var security = AttributeSecurity()
        if let read = c.security?.read { security.read = try level(read, path: path) }
        if let write = c.security?.write { security.write = try level(write, path: path) }
        var descriptors: [(type: BluetoothUUID, value: [UInt8])] = []
        for descriptor in c.descriptors ?? [] {
            guard let type = BluetoothUUID(string: descriptor.uuid), type != BluetoothUUID(0x2902) else {
                throw invalid(path, "descriptor \(descriptor.uuid) is no UUID, or is the CCCD (added for notify and indicate)")
            }
            descriptors.append((type, try bytes(descriptor.value, text: descriptor.text, what: "descriptor \(descriptor.uuid)", path: path)))
        }
        return ProfilePeripheral.Characteristic(uuid: uuid, properties: properties, value: value, security: security, descriptors: descriptors)
    }

    private static func level(_ word: String, path: String) throws(CLIFailure) -> SecurityLevel {
        switch word {
        case "none": .none
        case "encrypted": .encrypted
        case "authenticated": .authenticated
        default: throw invalid(path, "security \(word) is none, encrypted or authenticated")
        }
    }

    private static func bytes(_ hex: String?, text: String?, what: String, path: String) throws(CLIFailure) -> [UInt8] {
        let value: [UInt8]
        if let text { value = Array(text.utf8) } else if let hex {
            guard let parsed = Hex.bytes(hex) else { throw invalid(path, "\(what): value \(hex) is not hex") }
            value = parsed
        } else {
            value = []
        }
        guard value.count <= 512 else { throw invalid(path, "\(what): a value of \(value.count) bytes (at most 512)") }
        return value
    }

    private static func advertising(_ a: Document.Advertising?, name: String, services: [ProfilePeripheral.Service],
                                    path: String) throws(CLIFailure) -> VirtualAdvertising {
        let extended = a?.form == "extended"
        guard a?.form == nil || a?.form == "legacy" || extended else { throw invalid(path, "advertising form \(a?.form ?? "") is legacy or extended") }
        let interval = Duration.milliseconds(max(20, min(a?.intervalMs ?? 100, 10_240)))
        let connectable = a?.connectable ?? true
        if let data = a?.data {
            // Raw advertising data, as it goes on air.
            guard let bytes = Hex.bytes(data) else { throw invalid(path, "advertising data \(data) is not hex") }
            let response = try a?.scanResponse.map { text throws(CLIFailure) -> [UInt8] in
                guard let parsed = Hex.bytes(text) else { throw invalid(path, "scan response \(text) is not hex") }
                return parsed
            } ?? []
            guard extended ? bytes.count <= 1650 : bytes.count <= 31 && response.count <= 31 else {
                throw invalid(path, "advertising data longer than the form carries (31 bytes legacy, 1650 extended)")
            }
            return VirtualAdvertising(form: extended ? .extended(data: bytes) : .legacy(advertisingData: bytes, scanResponse: response),
                                      interval: interval, connectable: connectable)
        }
        var advertisement = Advertisement(flags: a?.flags ?? 0x06, localName: name)
        let uuids = try (a?.serviceUUIDs ?? services.map(\.uuid.description)).map { text throws(CLIFailure) -> BluetoothUUID in
            guard let uuid = BluetoothUUID(string: text) else { throw invalid(path, "advertised service uuid \(text) is no UUID") }
            return uuid
        }
        advertisement.serviceUUIDs = uuids
        for (company, data) in a?.manufacturerData ?? [:] {
            guard let id = UInt16(company, radix: 16), let bytes = Hex.bytes(data) else {
                throw invalid(path, "manufacturer data \(company): \(data) needs a hex company id and hex data")
            }
            advertisement.manufacturerData[id] = bytes
        }
        for (service, data) in a?.serviceData ?? [:] {
            guard let uuid = BluetoothUUID(string: service), let bytes = Hex.bytes(data) else {
                throw invalid(path, "service data \(service): \(data) needs a UUID and hex data")
            }
            advertisement.serviceData[uuid] = bytes
        }
        let form = VirtualAdvertising.form(for: advertisement, extended: extended)
        if case .legacy(let data, let response) = form, data.count > 31 || response.count > 31 {
            throw invalid(path, "the advertisement does not fit legacy advertising (31 bytes and 31 of scan response): use \"form\": \"extended\"")
        }
        return VirtualAdvertising(form: form, interval: interval, connectable: connectable)
    }

    private static func readBytes(_ path: String) throws(CLIFailure) -> [UInt8] {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.openChecked(path, expecting: .regularFile(orPipe: false)) } catch {
            throw CLIFailure(kind: .device, message: "profile:\(path): \(error)")
        }
        defer { fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= maximumBytes {
            let read = chunk.withUnsafeMutableBytes { raw -> Result<Int, Errno> in
                do throws(Errno) { return .success(try fd.read(into: raw)) } catch { return .failure(error) }
            }
            let count: Int
            switch read {
            case .success(let n): count = n
            case .failure(let error): throw CLIFailure(kind: .device, message: "profile:\(path): \(error)")
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
        throw invalid(path, "the file is longer than \(maximumBytes) bytes")
    }

    private static func invalid(_ path: String, _ why: String) -> CLIFailure {
        CLIFailure(kind: .usage, message: "profile:\(path): \(why) (see docs/serve-profile.md)")
    }
}

extension String.StringInterpolation {
    /// `services[0].characteristics[2]`: where in the document a decoding error is.
    mutating func appendInterpolation(where path: [any CodingKey]) {
        let text = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        appendLiteral(text.isEmpty ? "the document" : String(text.drop { $0 == "." }))
    }
}
