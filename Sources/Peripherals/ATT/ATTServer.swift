import BLEProtocol
import HAL
import Transports

/// An ATT error a peripheral's behaviour answers with (Core Vol 3 Part F §3.4.1.1; 0x80–0x9F are
/// a profile's own).
package struct ATTRefusal: Error, Hashable, Sendable {
    package var code: UInt8
    package init(_ code: UInt8) { self.code = code }

    package static let readNotPermitted = ATTRefusal(ATTErrorCode.readNotPermitted)
    package static let invalidLength = ATTRefusal(0x0D)
    package static let valueNotAllowed = ATTRefusal(0x13)
    package static let unlikely = ATTRefusal(ATTErrorCode.unlikelyError)
}

/// What stands behind a server's dynamic attributes: the device's own behaviour.
package protocol ATTServerBehaviour {
    mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal>
    /// A Write Request (`withResponse`) or a Write Command; a refusal of a command goes unreported.
    mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal?
    /// The client wrote a CCCD: bit 0 notifications, bit 1 indications.
    mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16)
}

/// The server side of one ATT bearer, sans-IO: fed each PDU the client sends, it answers with the
/// PDUs to send back, as the Attribute Protocol says (Core Vol 3 Part F §3.4). Discovery answers
/// are cut to the MTU and to the specification's "same length / same format" rules; reads take
/// offsets (Read Blob) and several handles (Read Multiple, Read Multiple Variable); long writes
/// go through a bounded prepare queue executed whole or not at all; CCCDs are kept per link;
/// indications wait for their confirmation, with a bounded queue behind them and the 30 s
/// transaction timeout (§3.3.3) after which the bearer is dead; attributes that need an
/// encrypted or authenticated link answer 0x0F / 0x05 until the link has that security.
package struct ATTServer: Sendable {
    package let database: AttributeDatabase
    /// The Server Rx MTU we answer Exchange MTU with.
    package let preferredMTU: UInt16
    package private(set) var mtu: UInt16 = ATTMTU.minimum
    /// Indications sent while one is unconfirmed wait here; beyond this many the oldest is dropped.
    package static let indicationQueueLimit = 32

    /// The ATT transaction timeout (Core Vol 3 Part F §3.3.3): an indication unconfirmed this long
    /// ends the bearer.
    package static let transactionTimeout: Duration = .seconds(30)
    /// The prepare queue's bounds (past them: 0x09 Prepare Queue Full).
    package static let prepareQueueEntries = 64
    package static let prepareQueueBytes = 4096

    private var configurations: [UInt16: UInt16] = [:]
    private var indicationInFlight = false
    /// When the indication in flight went out, for the transaction timeout.
    private var indicationSentAt: Duration?
    private var waitingIndications: [[UInt8]] = []
    private var prepared: [(handle: UInt16, offset: Int, value: [UInt8])] = []
    private var preparedBytes = 0
    /// The security the link has now (pairing sets it; a new link starts with none).
    package private(set) var linkSecurity = SecurityLevel.none
    /// The client did not confirm an indication within `transactionTimeout`: nothing more is
    /// sent or answered on this bearer (the link must be dropped to start a new one).
    package private(set) var timedOut = false
    /// Requests answered with an error because they made no sense (bad PDUs, unsupported opcodes).
    package private(set) var refusedRequests = 0
    package private(set) var droppedIndications = 0

    package init(database: AttributeDatabase, preferredMTU: UInt16 = ATTMTU.preferred) {
        self.database = database
        self.preferredMTU = max(23, preferredMTU)
    }

    /// A new link: MTU, CCCDs, indication state, the prepare queue and the link's security start
    /// afresh (nothing here is bonded).
    package mutating func reset() {
        mtu = ATTMTU.minimum
        configurations = [:]
        indicationInFlight = false
        indicationSentAt = nil
        waitingIndications = []
        prepared = []
        preparedBytes = 0
        linkSecurity = .none
        timedOut = false
    }

    /// The link became encrypted (or authenticated): attributes that need it are served from now on.
    package mutating func setLinkSecurity(_ level: SecurityLevel) {
        linkSecurity = level
    }

    /// When the indication in flight times out, if one is.
    package var transactionDeadline: Duration? {
        timedOut ? nil : indicationSentAt.map { $0 + Self.transactionTimeout }
    }

    /// Ends the bearer when the indication in flight has waited `transactionTimeout`; returns
    /// true once, at that moment.
    package mutating func expire(at now: Duration) -> Bool {
        guard let deadline = transactionDeadline, now >= deadline else { return false }
        timedOut = true
        indicationInFlight = false
        indicationSentAt = nil
        waitingIndications = []
        return true
    }

    package func configuration(ofValue handle: UInt16) -> UInt16 {
        database.clientConfigurationHandle(forValue: handle).flatMap { configurations[$0] } ?? 0
    }

    /// A Handle Value Notification when the client enabled notifications of this value, else nil.
    /// The value is cut to ATT_MTU − 3, as the protocol has it.
    package func notification(valueHandle: UInt16, value: [UInt8]) -> [UInt8]? {
        guard !timedOut, configuration(ofValue: valueHandle) & 0x0001 != 0 else { return nil }
        return ATTPDU.handleValueNotification(handle: valueHandle, value: Array(value.prefix(Int(mtu) - 3))).encoded
    }

    /// A Handle Value Indication to send now, when the client enabled indications and none is
    /// waiting for its confirmation; otherwise it queues (or nil when nobody subscribed). `now`
    /// starts the transaction timeout of one sent now.
    package mutating func indication(valueHandle: UInt16, value: [UInt8], at now: Duration) -> [UInt8]? {
        guard !timedOut, configuration(ofValue: valueHandle) & 0x0002 != 0 else { return nil }
        let pdu = ATTPDU.handleValueIndication(handle: valueHandle, value: Array(value.prefix(Int(mtu) - 3))).encoded
        guard indicationInFlight else {
            indicationInFlight = true
            indicationSentAt = now
            return pdu
        }
        if waitingIndications.count >= Self.indicationQueueLimit {
            waitingIndications.removeFirst()
            droppedIndications += 1
        }
        waitingIndications.append(pdu)
        return nil
    }

    /// Takes one PDU from the client and returns what to send back (usually one response).
    /// `now` times an indication that a confirmation lets go.
    package mutating func receive<B: ATTServerBehaviour>(_ bytes: [UInt8], behaviour: inout B, at now: Duration = .zero) -> [[UInt8]] {
        guard let opcode = bytes.first, !timedOut else { return [] }
        let isCommand = opcode & 0x40 != 0
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(parsing: bytes)
        } catch {
            return isCommand || ATTPDU.responseOpcode(forRequest: opcode) == nil ? [] : [refuse(opcode, 0, ATTErrorCode.invalidPDU)]
        }
        if bytes.count > Int(mtu), pdu.isRequest { return [refuse(opcode, 0, ATTErrorCode.invalidPDU)] }
        switch pdu {
        case .exchangeMTURequest(let clientMTU):
            mtu = max(23, min(clientMTU, preferredMTU))
            return [ATTPDU.exchangeMTUResponse(preferredMTU).encoded]
        case .findInformationRequest(let start, let end):
            return [findInformation(start, end)]
        case .findByTypeValueRequest(let start, let end, let type, let value):
            return [findByTypeValue(start, end, BluetoothUUID(type), value, &behaviour)]
        case .readByTypeRequest(let start, let end, let type):
            return [readByType(start, end, type, &behaviour)]
        case .readByGroupTypeRequest(let start, let end, let type):
            return [readByGroupType(start, end, type)]
        case .readRequest(let handle):
            return [read(handle, offset: nil, &behaviour)]
        case .readBlobRequest(let handle, let offset):
            return [read(handle, offset: Int(offset), &behaviour)]
        case .writeRequest(let handle, let value):
            return [write(handle, value, &behaviour)]
        case .writeCommand(let handle, let value):
            if let attribute = database.attribute(handle), attribute.permissions.contains(.writeCommand), value.count <= 512,
               securityRefusal(attribute.security.write) == nil {
                _ = behaviour.write(value, to: handle, withResponse: false)
            }
            return []
        case .handleValueConfirmation:
            indicationInFlight = false
            indicationSentAt = nil
            guard !waitingIndications.isEmpty else { return [] }
            indicationInFlight = true
            indicationSentAt = now
            return [waitingIndications.removeFirst()]
        case .unknown(ATTPDU.Opcode.readMultipleRequest, let parameters):
            return [readMultiple(parameters, variable: false, &behaviour)]
        case .unknown(ATTPDU.Opcode.readMultipleVariableRequest, let parameters):
            return [readMultiple(parameters, variable: true, &behaviour)]
        case .unknown(ATTPDU.Opcode.prepareWriteRequest, let parameters):
            return [prepareWrite(parameters)]
        case .unknown(ATTPDU.Opcode.executeWriteRequest, let parameters):
            return [executeWrite(parameters, &behaviour)]
        default:
            // A request this server does not implement (Read Multiple, Prepare Write…) is
            // answered so the client's bearer is not left waiting; anything else is dropped.
            return pdu.isRequest || (!isCommand && !pdu.isResponse && ATTPDU.responseOpcode(forRequest: opcode) != nil)
                ? [refuse(opcode, 0, ATTErrorCode.requestNotSupported)] : []
        }
    }

    // MARK: discovery

    private mutating func findInformation(_ start: UInt16, _ end: UInt16) -> [UInt8] {
        guard start != 0, start <= end else { return refuse(ATTPDU.Opcode.findInformationRequest, start, ATTErrorCode.invalidHandle) }
        let found = database.attributes(in: start, end)
        guard let first = found.first else { return refuse(ATTPDU.Opcode.findInformationRequest, start, ATTErrorCode.attributeNotFound) }
        // One response holds one format: all 16-bit UUIDs or all 128-bit, like the first.
        let short = first.type.shortValue != nil
        let entrySize = short ? 4 : 18
        var entries: [ATTHandleUUID] = []
        for attribute in found {
            guard (attribute.type.shortValue != nil) == short, 2 + (entries.count + 1) * entrySize <= Int(mtu) else { break }
            entries.append(ATTHandleUUID(handle: attribute.handle, uuid: attribute.type))
        }
        return ATTPDU.findInformationResponse(entries).encoded
    }

    private mutating func findByTypeValue<B: ATTServerBehaviour>(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID,
                                                                _ value: [UInt8], _ behaviour: inout B) -> [UInt8] {
        let opcode = ATTPDU.Opcode.findByTypeValueRequest
        guard start != 0, start <= end else { return refuse(opcode, start, ATTErrorCode.invalidHandle) }
        var ranges: [ATTHandleRange] = []
        for attribute in database.attributes(in: start, end) where attribute.type == type {
            guard 1 + (ranges.count + 1) * 4 <= Int(mtu) else { break }
            guard case .success(let current) = self.value(of: attribute, &behaviour), current == value else { continue }
            ranges.append(ATTHandleRange(start: attribute.handle, end: attribute.groupEnd ?? attribute.handle))
        }
        guard !ranges.isEmpty else { return refuse(opcode, start, ATTErrorCode.attributeNotFound) }
        return ATTPDU.findByTypeValueResponse(ranges).encoded
    }

    private mutating func readByType<B: ATTServerBehaviour>(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID,
                                                           _ behaviour: inout B) -> [UInt8] {
        let opcode = ATTPDU.Opcode.readByTypeRequest
        guard start != 0, start <= end else { return refuse(opcode, start, ATTErrorCode.invalidHandle) }
        let limit = min(Int(mtu) - 4, 253)
        var entries: [ATTHandleValue] = []
        matching: for attribute in database.attributes(in: start, end) where attribute.type == type {
            guard attribute.permissions.contains(.read) else {
                if entries.isEmpty { return refuse(opcode, attribute.handle, ATTErrorCode.readNotPermitted) }
                break
            }
            if let code = securityRefusal(attribute.security.read) {
                if entries.isEmpty { return refuse(opcode, attribute.handle, code) }
                break
            }
            let value: [UInt8]
            switch self.value(of: attribute, &behaviour) {
            case .success(let read): value = Array(read.prefix(limit))
            case .failure(let refusal):
                if entries.isEmpty { return refuse(opcode, attribute.handle, refusal.code) }
                break matching
            }
            // Every entry of one response has the same length, and the response fits the MTU.
            if let first = entries.first, first.value.count != value.count { break }
            guard 2 + (entries.count + 1) * (value.count + 2) <= Int(mtu) else { break }
            entries.append(ATTHandleValue(handle: attribute.handle, value: value))
        }
        guard !entries.isEmpty else { return refuse(opcode, start, ATTErrorCode.attributeNotFound) }
        return ATTPDU.readByTypeResponse(entries).encoded
    }

    private mutating func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID) -> [UInt8] {
        let opcode = ATTPDU.Opcode.readByGroupTypeRequest
        guard start != 0, start <= end else { return refuse(opcode, start, ATTErrorCode.invalidHandle) }
        guard type == Attribute.primaryService || type == Attribute.secondaryService else { return refuse(opcode, start, 0x10) }
        var entries: [ATTGroupValue] = []
        for attribute in database.attributes(in: start, end) where attribute.type == type {
            guard case .fixed(let uuid) = attribute.value else { continue }
            if let first = entries.first, first.value.count != uuid.count { break }
            guard 2 + (entries.count + 1) * (uuid.count + 4) <= Int(mtu) else { break }
            entries.append(ATTGroupValue(handle: attribute.handle, endGroup: attribute.groupEnd ?? attribute.handle, value: uuid))
        }
        guard !entries.isEmpty else { return refuse(opcode, start, ATTErrorCode.attributeNotFound) }
        return ATTPDU.readByGroupTypeResponse(entries).encoded
    }

    // MARK: values

    private mutating func read<B: ATTServerBehaviour>(_ handle: UInt16, offset: Int?, _ behaviour: inout B) -> [UInt8] {
        let opcode = offset == nil ? ATTPDU.Opcode.readRequest : ATTPDU.Opcode.readBlobRequest
        guard let attribute = database.attribute(handle) else { return refuse(opcode, handle, ATTErrorCode.invalidHandle) }
        guard attribute.permissions.contains(.read) else { return refuse(opcode, handle, ATTErrorCode.readNotPermitted) }
        if let code = securityRefusal(attribute.security.read) { return refuse(opcode, handle, code) }
        let value: [UInt8]
        switch self.value(of: attribute, &behaviour) {
        case .success(let read): value = read
        case .failure(let refusal): return refuse(opcode, handle, refusal.code)
        }
        let room = Int(mtu) - 1
        guard let offset else { return ATTPDU.readResponse(Array(value.prefix(room))).encoded }
        guard offset <= value.count else { return refuse(opcode, handle, 0x07) } // Invalid Offset
        return ATTPDU.readBlobResponse(Array(value[offset...].prefix(room))).encoded
    }

    private mutating func write<B: ATTServerBehaviour>(_ handle: UInt16, _ value: [UInt8], _ behaviour: inout B) -> [UInt8] {
        let opcode = ATTPDU.Opcode.writeRequest
        if let code = writeRefusal(handle) { return refuse(opcode, handle, code) }
        if let code = apply(value, to: handle, &behaviour) { return refuse(opcode, handle, code) }
        return ATTPDU.writeResponse.encoded
    }

    /// Why a write to `handle` is refused before its value is looked at, if it is.
    private func writeRefusal(_ handle: UInt16) -> UInt8? {
        guard let attribute = database.attribute(handle) else { return ATTErrorCode.invalidHandle }
        guard attribute.permissions.contains(.write) else { return ATTErrorCode.writeNotPermitted }
        return securityRefusal(attribute.security.write)
    }

    /// A whole value written to `handle` (a Write Request, or an executed prepare queue): the CCCD
    /// kept here, anything else handed to the behaviour. Returns the error code of a refusal.
    private mutating func apply<B: ATTServerBehaviour>(_ value: [UInt8], to handle: UInt16, _ behaviour: inout B) -> UInt8? {
        guard let attribute = database.attribute(handle) else { return ATTErrorCode.invalidHandle }
        guard value.count <= 512 else { return ATTErrorCode.invalidAttributeValueLength }
        if case .clientConfiguration = attribute.value {
            guard value.count == 2 else { return ATTErrorCode.invalidAttributeValueLength }
            let configuration = UInt16(value[0]) | UInt16(value[1]) << 8
            guard let (valueHandle, properties) = database.characteristic(ofClientConfiguration: handle) else {
                return ATTErrorCode.unlikelyError
            }
            var allowed: UInt16 = 0
            if properties.contains(.notify) { allowed |= 0x0001 }
            if properties.contains(.indicate) { allowed |= 0x0002 }
            // Bits the characteristic does not support: "Client Characteristic Configuration
            // Descriptor Improperly Configured" (Core Supplement Part B §1.2).
            guard configuration & ~allowed == 0 else { return 0xFD }
            configurations[handle] = configuration
            if configuration & 0x0002 == 0 {
                waitingIndications.removeAll()
            }
            behaviour.clientConfigurationChanged(valueHandle: valueHandle, to: configuration)
            return nil
        }
        return behaviour.write(value, to: handle, withResponse: true)?.code
    }

    // MARK: long writes (Core Vol 3 Part F §3.4.6)

    /// Prepare Write Request: handle (2), offset (2), part of the value. Permissions are checked
    /// now; offsets and lengths when the queue is executed.
    private mutating func prepareWrite(_ parameters: [UInt8]) -> [UInt8] {
        let opcode = ATTPDU.Opcode.prepareWriteRequest
        guard parameters.count >= 4 else { return refuse(opcode, 0, ATTErrorCode.invalidPDU) }
        let handle = UInt16(parameters[0]) | UInt16(parameters[1]) << 8
        let offset = Int(UInt16(parameters[2]) | UInt16(parameters[3]) << 8)
        let part = Array(parameters[4...])
        if let code = writeRefusal(handle) { return refuse(opcode, handle, code) }
        guard prepared.count < Self.prepareQueueEntries, preparedBytes + part.count <= Self.prepareQueueBytes else {
            return refuse(opcode, handle, ATTErrorCode.prepareQueueFull)
        }
        prepared.append((handle, offset, part))
        preparedBytes += part.count
        return [ATTPDU.Opcode.prepareWriteResponse] + parameters
    }

    /// Execute Write Request: flags 0x00 cancels the queue, 0x01 writes it. Each handle's parts
    /// make one value (each part at most at the end of what is there); a part past the end is
    /// Invalid Offset, a value over 512 bytes Invalid Attribute Value Length, and the first
    /// refusal ends the execution with that handle. The queue is empty afterwards either way.
    private mutating func executeWrite<B: ATTServerBehaviour>(_ parameters: [UInt8], _ behaviour: inout B) -> [UInt8] {
        let opcode = ATTPDU.Opcode.executeWriteRequest
        guard parameters.count == 1, parameters[0] <= 1 else { return refuse(opcode, 0, ATTErrorCode.invalidPDU) }
        let queue = prepared
        prepared = []
        preparedBytes = 0
        guard parameters[0] == 1 else { return [ATTPDU.Opcode.executeWriteResponse] }
        var order: [UInt16] = []
        var values: [UInt16: [UInt8]] = [:]
        for entry in queue {
            var value = values[entry.handle] ?? []
            if values[entry.handle] == nil { order.append(entry.handle) }
            guard entry.offset <= value.count else { return refuse(opcode, entry.handle, ATTErrorCode.invalidOffset) }
            value.replaceSubrange(entry.offset..<min(value.count, entry.offset + entry.value.count), with: entry.value)
            guard value.count <= 512 else { return refuse(opcode, entry.handle, ATTErrorCode.invalidAttributeValueLength) }
            values[entry.handle] = value
        }
        for handle in order {
            if let code = apply(values[handle] ?? [], to: handle, &behaviour) { return refuse(opcode, handle, code) }
        }
        return [ATTPDU.Opcode.executeWriteResponse]
    }

    // MARK: several values at once (Core Vol 3 Part F §3.4.4.7, §3.4.4.11)

    /// Read Multiple (values back to back, cut to ATT_MTU − 1) or Read Multiple Variable (each
    /// value after its length, the last cut to fit). Any handle that cannot be read refuses the
    /// whole request, naming that handle.
    private mutating func readMultiple<B: ATTServerBehaviour>(_ parameters: [UInt8], variable: Bool, _ behaviour: inout B) -> [UInt8] {
        let opcode = variable ? ATTPDU.Opcode.readMultipleVariableRequest : ATTPDU.Opcode.readMultipleRequest
        guard parameters.count >= 4, parameters.count % 2 == 0 else { return refuse(opcode, 0, ATTErrorCode.invalidPDU) }
        var body: [UInt8] = []
        for index in stride(from: 0, to: parameters.count, by: 2) {
            let handle = UInt16(parameters[index]) | UInt16(parameters[index + 1]) << 8
            guard let attribute = database.attribute(handle) else { return refuse(opcode, handle, ATTErrorCode.invalidHandle) }
            guard attribute.permissions.contains(.read) else { return refuse(opcode, handle, ATTErrorCode.readNotPermitted) }
            if let code = securityRefusal(attribute.security.read) { return refuse(opcode, handle, code) }
            switch self.value(of: attribute, &behaviour) {
            case .success(let value):
                body += variable ? LittleEndian.u16(UInt16(min(value.count, 512))) + value.prefix(512) : value
            case .failure(let refusal):
                return refuse(opcode, handle, refusal.code)
            }
        }
        let response = variable ? ATTPDU.Opcode.readMultipleVariableResponse : ATTPDU.Opcode.readMultipleResponse
        return [response] + body.prefix(Int(mtu) - 1)
    }

    // MARK: security

    /// 0x0F Insufficient Encryption or 0x05 Insufficient Authentication while the link lacks
    /// what the attribute needs (Core Vol 3 Part C §10.3.1); nil when it has it.
    private func securityRefusal(_ required: SecurityLevel) -> UInt8? {
        guard linkSecurity < required else { return nil }
        return required == .authenticated ? ATTErrorCode.insufficientAuthentication : ATTErrorCode.insufficientEncryption
    }

    private func value<B: ATTServerBehaviour>(of attribute: Attribute, _ behaviour: inout B) -> Result<[UInt8], ATTRefusal> {
        switch attribute.value {
        case .fixed(let bytes): .success(bytes)
        case .dynamic: behaviour.read(attribute.handle)
        case .clientConfiguration: .success(LittleEndian.u16(configurations[attribute.handle] ?? 0))
        }
    }

    private mutating func refuse(_ opcode: UInt8, _ handle: UInt16, _ code: UInt8) -> [UInt8] {
        if code == ATTErrorCode.invalidPDU || code == ATTErrorCode.requestNotSupported { refusedRequests += 1 }
        return ATTPDU.errorResponse(requestOpcode: opcode, handle: handle, code: code).encoded
    }
}
