import BLEProtocol
import HAL

/// A characteristic's properties byte (Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: OptionSet, Hashable, Sendable {
    /// The properties byte as the characteristic declaration carries it.
    public let rawValue: UInt8
    /// Wraps a properties byte as read from the peer; unknown bits are kept.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The value may be broadcast in advertising data.
    public static let broadcast = Self(rawValue: 0x01)
    /// The value may be read.
    public static let read = Self(rawValue: 0x02)
    /// The value may be written with a Write Command (no response).
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    /// The value may be written with a Write Request.
    public static let write = Self(rawValue: 0x08)
    /// The value may be notified; `subscribe` prefers it over indications.
    public static let notify = Self(rawValue: 0x10)
    /// The value may be indicated (each one confirmed).
    public static let indicate = Self(rawValue: 0x20)
    /// The value may be written with a signed write.
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    /// More properties are in the Characteristic Extended Properties descriptor.
    public static let extendedProperties = Self(rawValue: 0x80)

    /// The contract's names, in bit order.
    public var names: [String] {
        let all: [(Self, String)] = [(.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "writeWithoutResponse"),
                                     (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
                                     (.authenticatedSignedWrites, "authenticatedSignedWrites"), (.extendedProperties, "extendedProperties")]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

/// A primary service found by discovery, with the handle range its characteristics live in.
public struct GATTService: Hashable, Sendable {
    /// The service's type, e.g. 0x181D Weight Scale.
    public var uuid: BluetoothUUID
    /// The service declaration's handle; discovery of its characteristics starts here.
    public var start: UInt16
    /// The last handle of the service; nothing of the service lies beyond it.
    public var end: UInt16
}

/// A descriptor of a characteristic, e.g. its Client Characteristic Configuration.
public struct GATTDescriptor: Hashable, Sendable {
    /// The descriptor's type, e.g. 0x2902 for the CCCD.
    public var uuid: BluetoothUUID
    /// The handle to read or write the descriptor at.
    public var handle: UInt16
}

/// A characteristic found by discovery: its handles, what it allows, and its descriptors.
public struct GATTCharacteristic: Hashable, Sendable {
    /// The characteristic's type, e.g. 0x2A9D Weight Measurement.
    public var uuid: BluetoothUUID
    /// The handle of the characteristic declaration itself, which bounds the previous characteristic's descriptors.
    public var declarationHandle: UInt16
    /// The handle its value is read, written and notified at.
    public var valueHandle: UInt16
    /// What the characteristic allows (read, write, notify…), from its declaration.
    public var properties: CharacteristicProperties
    /// The descriptors between the value and the next characteristic, as full discovery found them.
    public var descriptors: [GATTDescriptor]

    /// The Client Characteristic Configuration descriptor type; writing it turns notifications on and off.
    public static let clientConfiguration = BluetoothUUID(0x2902)
}

/// A discovered service with everything in it.
public struct GATTServiceTree: Hashable, Sendable {
    /// The service the tree describes.
    public var service: GATTService
    /// The service's characteristics in handle order, each with its descriptors.
    public var characteristics: [GATTCharacteristic]
}

/// The GATT client over one ATT bearer: discovery, reads (long ones too), writes and
/// subscriptions. Every call fails cleanly once the link is gone.
public struct GATTClient: Sendable {
    /// The ATT bearer requests go through; shared with the link.
    public let bearer: ATTBearer

    /// Links make their own client; this is for the fuzz targets' stand-in peers.
    @_spi(Fuzzing) public init(bearer: ATTBearer) { self.bearer = bearer }

    static let primaryService = BluetoothUUID(0x2800)
    static let characteristicDeclaration = BluetoothUUID(0x2803)

    /// Every primary service on the peer, in handle order (Read By Group Type until Attribute Not Found).
    public func primaryServices() async throws(BLEError) -> [GATTService] {
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let response: ATTPDU
            do {
                response = try await bearer.request(.readByGroupTypeRequest(start: start, end: 0xFFFF, type: Self.primaryService))
            } catch .att(let failure) where failure.code == 0x0A {
                break
            }
            guard case .readByGroupTypeResponse(let entries) = response, !entries.isEmpty else {
                throw .attProtocolError("service discovery got an unexpected answer")
            }
            var lowest = start
            for entry in entries {
                try Self.checkGroup(start: entry.handle, end: entry.endGroup, from: &lowest, "service discovery")
                guard let uuid = BluetoothUUID(littleEndian: entry.value) else {
                    throw .attProtocolError("a service UUID of \(entry.value.count) bytes")
                }
                services.append(GATTService(uuid: uuid, start: entry.handle, end: entry.endGroup))
            }
            guard let last = entries.last, last.endGroup < 0xFFFF else { break }
            start = last.endGroup + 1
        }
        return services
    }

    /// The primary services of one type (Find By Type Value), e.g. to find a scale's service without full discovery.
    public func primaryServices(uuid: BluetoothUUID) async throws(BLEError) -> [GATTService] {
        var services: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let response: ATTPDU
            do {
                response = try await bearer.request(.findByTypeValueRequest(start: start, end: 0xFFFF, type: 0x2800, value: uuid.littleEndianBytes))
            } catch .att(let failure) where failure.code == 0x0A {
                break
            }
            guard case .findByTypeValueResponse(let ranges) = response, !ranges.isEmpty else {
                throw .attProtocolError("service discovery by UUID got an unexpected answer")
            }
            var lowest = start
            for range in ranges {
                try Self.checkGroup(start: range.start, end: range.end, from: &lowest, "service discovery by UUID")
            }
            services += ranges.map { GATTService(uuid: uuid, start: $0.start, end: $0.end) }
            guard let last = ranges.last, last.end < 0xFFFF else { break }
            start = last.end + 1
        }
        return services
    }

    /// Services are groups of handles that follow one another (Vol 3 Part G §3.1): each starts
    /// after the last one ended, inside the range asked for, and ends where it starts or later.
    /// A peer that answers otherwise — overlapping, repeating or going backwards — would keep
    /// discovery going for as long as it kept answering, so that is a protocol error.
    private static func checkGroup(start: UInt16, end: UInt16, from lowest: inout UInt16, _ what: String) throws(BLEError) {
        guard start >= lowest, start != 0, end >= start else {
            throw .attProtocolError("\(what) got the group 0x\(Hex.word(start))–0x\(Hex.word(end)) where only groups from 0x\(Hex.word(lowest)) "
                                 + "could come next (services must follow one another without overlapping)")
        }
        lowest = end == .max ? end : end + 1
    }

    /// The characteristics of a service, each with its descriptors.
    public func characteristics(of service: GATTService) async throws(BLEError) -> [GATTCharacteristic] {
        var found: [GATTCharacteristic] = []
        var start = service.start
        while start <= service.end {
            let response: ATTPDU
            do {
                response = try await bearer.request(.readByTypeRequest(start: start, end: service.end, type: Self.characteristicDeclaration))
            } catch .att(let failure) where failure.code == 0x0A {
                break
            }
            guard case .readByTypeResponse(let entries) = response, !entries.isEmpty else {
                throw .attProtocolError("characteristic discovery got an unexpected answer")
            }
            var lowest = start
            for entry in entries {
                try Self.check(entry.handle, from: &lowest, to: service.end, "characteristic discovery")
                let value = entry.value
                guard value.count == 5 || value.count == 19, let uuid = BluetoothUUID(littleEndian: value[3...]) else {
                    throw .attProtocolError("a characteristic declaration of \(value.count) bytes")
                }
                found.append(GATTCharacteristic(uuid: uuid, declarationHandle: entry.handle,
                                                valueHandle: UInt16(value[1]) | UInt16(value[2]) << 8,
                                                properties: CharacteristicProperties(rawValue: value[0]), descriptors: []))
            }
            guard let last = entries.last, last.handle < service.end else { break }
            start = last.handle + 1
        }
        // Descriptors sit between a characteristic's value and the next declaration (or the service end).
        for index in found.indices {
            let first = Int(found[index].valueHandle) + 1
            let last = index + 1 < found.count ? Int(found[index + 1].declarationHandle) - 1 : Int(service.end)
            guard first <= last else { continue }
            found[index].descriptors = try await descriptors(from: UInt16(first), to: UInt16(last))
        }
        return found
    }

    func descriptors(from first: UInt16, to last: UInt16) async throws(BLEError) -> [GATTDescriptor] {
        var result: [GATTDescriptor] = []
        var start = first
        while start <= last {
            let response: ATTPDU
            do {
                response = try await bearer.request(.findInformationRequest(start: start, end: last))
            } catch .att(let failure) where failure.code == 0x0A {
                break
            }
            guard case .findInformationResponse(let entries) = response, !entries.isEmpty else {
                throw .attProtocolError("descriptor discovery got an unexpected answer")
            }
            var lowest = start
            for entry in entries { try Self.check(entry.handle, from: &lowest, to: last, "descriptor discovery") }
            result += entries.map { GATTDescriptor(uuid: $0.uuid, handle: $0.handle) }
            guard let end = entries.last?.handle, end < last else { break }
            start = end + 1
        }
        return result
    }

    /// A server lists attributes in rising handle order inside the range asked for. One that does
    /// not could send the next request back to where the last one started, and discovery would
    /// never end; a handle of zero would underflow the range of its predecessor's descriptors.
    private static func check(_ handle: UInt16, from lowest: inout UInt16, to highest: UInt16,
                              _ what: String) throws(BLEError) {
        guard handle >= lowest, handle <= highest else {
            throw .attProtocolError("\(what) got handle 0x\(Hex.word(handle)) where only 0x\(Hex.word(lowest))–0x\(Hex.word(highest)) "
                                 + "could come next (handles must rise inside the range asked for)")
        }
        lowest = handle == .max ? handle : handle + 1
    }

    /// How long discovering a whole database may take: a real one takes well under a second, a
    /// peer feeding answers slowly (each inside the ATT timeout) must not hold a tool for ever.
    public static let discoveryDeadline = Duration.seconds(30)

    /// Everything: every primary service with its characteristics and descriptors, within
    /// `deadline` in all (the request in flight is cancelled when it passes).
    public func discoverAll(deadline: Duration = GATTClient.discoveryDeadline) async throws(BLEError) -> [GATTServiceTree] {
        let clock = bearer.clock
        let result: Result<[GATTServiceTree], BLEError> = await withTaskGroup(of: Result<[GATTServiceTree], BLEError>?.self) { group in
            group.addTask {
                do throws(BLEError) {
                    var trees: [GATTServiceTree] = []
                    for service in try await primaryServices() {
                        trees.append(GATTServiceTree(service: service, characteristics: try await characteristics(of: service)))
                    }
                    return .success(trees)
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                guard (try? await clock.sleep(for: deadline)) != nil else { return nil }
                return .failure(.deadlineExceeded("discovering the GATT database", deadline))
            }
            var outcome: Result<[GATTServiceTree], BLEError> = .failure(.cancelled)
            for await next in group {
                guard let next else { continue }
                outcome = next
                break
            }
            group.cancelAll()
            return outcome
        }
        return try result.get()
    }

    /// Reads a value, following with Read Blob while the answers come back full.
    public func read(_ handle: UInt16) async throws(BLEError) -> [UInt8] {
        guard case .readResponse(var value) = try await bearer.request(.readRequest(handle: handle)) else {
            throw .attProtocolError("the answer to Read was not a Read Response")
        }
        let full = Int(bearer.mtu) - 1
        var chunk = value.count
        while chunk == full, value.count < 512 {
            let response: ATTPDU
            do {
                response = try await bearer.request(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
            } catch .att(let failure) where [0x07, 0x0B].contains(failure.code) {
                break // Invalid Offset / Attribute Not Long: the value ended exactly at a boundary
            }
            guard case .readBlobResponse(let part) = response else {
                throw .attProtocolError("the answer to Read Blob was not a Read Blob Response")
            }
            value += part
            chunk = part.count
        }
        return value
    }

    /// Writes a value with a Write Request and returns once the peer confirms it.
    public func write(_ handle: UInt16, _ value: [UInt8]) async throws(BLEError) {
        guard case .writeResponse = try await bearer.request(.writeRequest(handle: handle, value: value)) else {
            throw .attProtocolError("the answer to Write was not a Write Response")
        }
    }

    /// Writes a value without waiting for the peer; `value` must fit in ATT_MTU − 3 bytes.
    public func writeWithoutResponse(_ handle: UInt16, _ value: [UInt8]) async throws(BLEError) {
        let limit = Int(bearer.mtu) - 3
        guard value.count <= limit else { throw .invalid("a Write Command carries at most \(limit) bytes at this MTU") }
        try await bearer.command(.writeCommand(handle: handle, value: value))
    }

    /// Turns on notifications (or indications, when that is all it offers) through the CCCD and
    /// returns the values as they come. The stream ends when the link does.
    public func subscribe(_ characteristic: GATTCharacteristic) async throws(BLEError) -> NotificationValues<[UInt8]> {
        guard let cccd = characteristic.descriptors.first(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
            throw .notFound("the Client Characteristic Configuration of \(characteristic.uuid)")
        }
        let values = bearer.values(of: characteristic.valueHandle)
        let notify = characteristic.properties.contains(.notify)
        try await write(cccd.handle, notify ? [0x01, 0x00] : [0x02, 0x00])
        bearer.reportSubscribed(characteristic, indications: !notify)
        return values
    }

    /// Turns on notifications (or indications) without a stream of its own: for callers that
    /// read `ATTBearer.notifications()`.
    public func enableNotifications(_ characteristic: GATTCharacteristic) async throws(BLEError) {
        guard let cccd = characteristic.descriptors.first(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
            throw .notFound("the Client Characteristic Configuration of \(characteristic.uuid)")
        }
        let notify = characteristic.properties.contains(.notify)
        try await write(cccd.handle, notify ? [0x01, 0x00] : [0x02, 0x00])
        bearer.reportSubscribed(characteristic, indications: !notify)
    }

    /// Turns notifications and indications off by writing 0 to the CCCD.
    public func unsubscribe(_ characteristic: GATTCharacteristic) async throws(BLEError) {
        guard let cccd = characteristic.descriptors.first(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
            throw .notFound("the Client Characteristic Configuration of \(characteristic.uuid)")
        }
        try await write(cccd.handle, [0x00, 0x00])
    }
}
