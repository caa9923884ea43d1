import BLEProtocol
import Foundation
import HAL
import Peripherals
import Synchronization
import Transports

/// What `serve` saw of the central, kept as it happens: the contract's JSON lines (hwprobe-cli.md,
/// third edition: `advertising`, `connected`, `mtu`, `subscribed`, `unsubscribed`, `read`,
/// `write`, `notified`, `indicated`, `disconnected`), the screen's state, and the recording from
/// the device's side (what the central asked, `>`, and what was answered, `<`, in the cassette
/// format, so `serve replay:` and `--hci replay:` play it again).
///
/// Fed `PeripheralHost`'s events on its loop, one at a time; read by the screen from the terminal's
/// threads, so its state is behind a lock.
final class ServeSession: Sendable {
    /// One JSON line's fields; nil fields are left out.
    struct Line: Encodable, Equatable {
        var event: String
        var t: Double
        var address: String?
        var form: String?
        var central: String?
        var mtu: Int?
        var handle: Int?
        var uuid: String?
        var value: String?
        var indications: Bool?
        var error: String?
        var reason: String?
        /// `paired`: the method (`just-works`, `passkey`, `numeric-comparison`).
        var method: String?
        /// `encrypted`: LE security mode 1's level (2 unauthenticated, 3 authenticated, 4 SC authenticated).
        var level: Int?
        /// `paired`, `encrypted`: Secure Connections or legacy pairing.
        var secureConnections: Bool?
        /// `relay`: which link it happened on, `app` or `device`.
        var side: String?

        init(event: String, t: Double) {
            self.event = event
            self.t = t
        }

        /// An event `t` from the start, to the millisecond.
        init(_ event: String, at t: Duration) {
            let seconds = t.inSeconds
            self.init(event: event, t: (seconds * 1000).rounded() / 1000)
        }
    }

    struct Snapshot: Sendable {
        var advertising: String?
        var central: String?
        var mtu: Int = 23
        var subscriptions: [UInt16: (uuid: String, indications: Bool)] = [:]
        /// The last few events, worded only when the screen is drawn.
        var recentLines: [Line] = []
        var recent: [String] { recentLines.map(ServeSession.human) }
        var served: Int = 0
    }

    private struct State {
        var snapshot = Snapshot()
        var clientMTU: UInt16 = 23
        /// The central's request waiting for our answer: opcode, handle, value written.
        var pending: (opcode: UInt8, handle: UInt16, value: [UInt8])?
        var prepared: [(handle: UInt16, offset: Int, value: [UInt8])] = []
        var cassette: BLECassette.Peripheral?
        var connectionStart: Duration?
        var connection: BLECassette.Connection?
        var dropped = 0
        var lastAdvertising: AdvertisingSetup?
    }

    private let state = Mutex(State())
    /// Each handle's UUID as the lines spell it (a CCCD's is its characteristic's), worked out
    /// once: a stream names its handle thousands of times a second.
    private let uuids: [UInt16: String]
    /// Each CCCD's characteristic value handle: a write to one is a subscription.
    private let clientConfigurations: [UInt16: UInt16]
    /// Lines kept for the screen's "recent" list.
    static let recentLines = 8

    /// Names what the central does after `database`, the served device's own.
    convenience init(database: AttributeDatabase?) {
        var uuids: [UInt16: String] = [:]
        var configurations: [UInt16: UInt16] = [:]
        for attribute in database?.attributes ?? [] {
            if attribute.type == Attribute.clientConfigurationType, let (value, _) = database?.characteristic(ofClientConfiguration: attribute.handle) {
                uuids[attribute.handle] = database?.attribute(value)?.type.description
                configurations[attribute.handle] = value
            } else {
                uuids[attribute.handle] = attribute.type.description
            }
        }
        self.init(uuids: uuids, clientConfigurations: configurations)
    }

    /// Names what the central does after a database discovered on another device (`relay`).
    convenience init(discovered services: [GATTServiceTree]) {
        var uuids: [UInt16: String] = [:]
        var configurations: [UInt16: UInt16] = [:]
        for tree in services {
            uuids[tree.service.start] = Attribute.primaryService.description
            for characteristic in tree.characteristics {
                uuids[characteristic.declarationHandle] = Attribute.characteristicDeclaration.description
                uuids[characteristic.valueHandle] = characteristic.uuid.description
                for descriptor in characteristic.descriptors {
                    if descriptor.uuid == GATTCharacteristic.clientConfiguration {
                        uuids[descriptor.handle] = characteristic.uuid.description
                        configurations[descriptor.handle] = characteristic.valueHandle
                    } else {
                        uuids[descriptor.handle] = descriptor.uuid.description
                    }
                }
            }
        }
        self.init(uuids: uuids, clientConfigurations: configurations)
    }

    private init(uuids: [UInt16: String], clientConfigurations: [UInt16: UInt16]) {
        self.uuids = uuids
        self.clientConfigurations = clientConfigurations
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// The recording so far: the served device as the central met it.
    var cassette: BLECassette {
        state.withLock { s in
            guard var peripheral = s.cassette else { return BLECassette() }
            // A link still up when the recording stops is kept without an end.
            if let open = s.connection { peripheral.connections.append(open) }
            return BLECassette(peripherals: [peripheral])
        }
    }

    /// How a securing ended, as a line: `paired` (`method`, `secureConnections`, or `error`), or
    /// `encrypted` with a bond's key (`level`, or `error`); nil when it could not even start.
    static func securedLine(_ outcome: SecuringOutcome?, at t: Duration) -> Line {
        switch outcome {
        case .paired(let paired)?, .notStored(let paired, _)?:
            var l = Line("paired", at: t)
            l.method = paired.method.description
            l.secureConnections = paired.security.isSecureConnections
            if case .notStored(_, let why)? = outcome { l.error = why }
            return l
        case .failed(let failure)?:
            var l = Line("paired", at: t)
            l.error = failure.description
            return l
        case .encrypted(let security)?:
            var l = Line("encrypted", at: t)
            l.level = security.level
            l.secureConnections = security.isSecureConnections
            return l
        case .bondRejected(let status)?:
            var l = Line("encrypted", at: t)
            l.error = "the device refused the bond's key (HCI status 0x\(Hex.byte(status))): forget the bond (hwprobe bonds --remove) and pair again"
            return l
        case nil:
            var l = Line("paired", at: t)
            l.error = "the link could not be secured (it ended, or the controller refused)"
            return l
        }
    }

    /// A securing's outcome as the cassette keeps it, from the served side's view: the device is
    /// us, so the device's keys are the kinds we sent and the host's those the central sent (kinds,
    /// never values). A failure is kept only when a Pairing Failed went over the air; an
    /// encryption is its own event (`securityChanged`).
    static func securityRecord(_ outcome: SecuringOutcome) -> BLECassette.SecurityRecord.Event? {
        switch outcome {
        case .paired(let paired), .notStored(let paired, _):
            return .pairing(method: paired.method.description, secureConnections: paired.security.isSecureConnections,
                            deviceKeys: paired.sentKeyKinds, hostKeys: paired.receivedKeyKinds)
        case .failed(let failure):
            switch failure.cause {
            case .sent(let reason), .received(let reason): return .pairingFailed(reason: reason.rawValue)
            case .refused, .timeout, .linkLost, .encryptionFailed: return nil
            }
        case .encrypted, .bondRejected:
            return nil
        }
    }

    /// Adds a security record to the connection being recorded. We learn of a pairing only when
    /// it is over, after the link was encrypted for it: the pairing goes before that encryption
    /// (at its time), the order a central-side recording has, so a replay pairs, then encrypts.
    private func record(security event: BLECassette.SecurityRecord.Event, at t: Duration, in s: inout State) {
        guard var connection = s.connection, let start = s.connectionStart else { return }
        guard connection.security.count < BLECassette.Limits.securityRecords else {
            s.dropped += 1
            return
        }
        var record = BLECassette.SecurityRecord(at: t - start, event: event)
        if case .pairing = event, let last = connection.security.last, last.event == .encrypted {
            record.at = last.at
            connection.security.insert(record, at: connection.security.count - 1)
        } else {
            connection.security.append(record)
        }
        s.connection = connection
    }

    /// Takes one event at `t` (from the start) and returns the JSON lines it makes.
    func take(_ event: PeripheralHost.Event, at t: Duration) -> [Line] {
        state.withLock { s -> [Line] in
            var lines: [Line] = []
            func line(_ event: String) -> Line { Line(event, at: t) }
            switch event {
            case .advertising(let setup, let address):
                var l = line("advertising")
                l.address = address?.description
                switch setup.form {
                case .legacy: l.form = "legacy"
                case .extended: l.form = "extended"
                }
                lines.append(l)
                s.snapshot.advertising = (address?.description ?? "the controller's address") + " (\(l.form ?? ""))"
                // A private address changes; the cassette keeps the device under its identity.
                record(advertising: setup, address: setup.identityAddress ?? address, at: t, in: &s)
            case .advertisingFailed(let why):
                var l = line("advertising")
                l.error = why
                lines.append(l)
                s.snapshot.advertising = "refused: \(why)"
            case .connected(let info):
                var l = line("connected")
                l.central = info.central.description
                lines.append(l)
                s.snapshot.central = info.central.description
                s.snapshot.advertising = nil
                s.snapshot.mtu = 23
                s.snapshot.subscriptions = [:]
                s.clientMTU = 23
                s.pending = nil
                s.prepared = []
                s.connectionStart = t
                s.connection = BLECassette.Connection(at: t)
            case .parametersChanged:
                break
            case .disconnected(let reason):
                var l = line("disconnected")
                l.reason = "0x" + Hex.byte(reason)
                lines.append(l)
                s.snapshot.central = nil
                s.snapshot.subscriptions = [:]
                if var connection = s.connection, let start = s.connectionStart {
                    // From the central's side: it ended the link unless we did (0x16 here).
                    connection.end = BLECassette.Disconnection(at: t - start, byHost: reason != 0x16, reason: reason == 0x16 ? 0x13 : reason)
                    if s.cassette?.connections.count ?? 0 < BLECassette.Limits.connections { s.cassette?.connections.append(connection) } else { s.dropped += 1 }
                }
                s.connection = nil
                s.connectionStart = nil
            case .securityChanged(let security):
                guard security.isEncrypted else { break }
                var l = line("encrypted")
                l.level = security.level
                l.secureConnections = security.isSecureConnections
                lines.append(l)
                record(security: .encrypted, at: t, in: &s)
            case .secured(let outcome):
                if let event = Self.securityRecord(outcome) { record(security: event, at: t, in: &s) }
                switch outcome {
                case .paired, .notStored, .failed: lines.append(Self.securedLine(outcome, at: t))
                // The link's encryption is its own event (`securityChanged`).
                case .encrypted, .bondRejected: break
                }
            case .fromCentral(let pdu):
                recordATT(pdu, direction: .toPeripheral, at: t, in: &s)
                lines += fromCentral(pdu, line: line, in: &s)
            case .toCentral(let pdu):
                recordATT(pdu, direction: .fromPeripheral, at: t, in: &s)
                lines += toCentral(pdu, line: line, in: &s)
            }
            s.snapshot.recentLines += lines.suffix(Self.recentLines)
            if s.snapshot.recentLines.count > Self.recentLines { s.snapshot.recentLines.removeFirst(s.snapshot.recentLines.count - Self.recentLines) }
            return lines
        }
    }

    private func fromCentral(_ pdu: [UInt8], line: (String) -> Line, in s: inout State) -> [Line] {
        guard let opcode = pdu.first else { return [] }
        let handle = pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
        switch opcode {
        case 0x02:
            if pdu.count >= 3 { s.clientMTU = handle }
        case 0x0A, 0x0C, 0x12:
            s.pending = (opcode, handle, Array(pdu.dropFirst(3)))
        case 0x16:
            if pdu.count >= 5 {
                s.prepared.append((handle, Int(UInt16(pdu[3]) | UInt16(pdu[4]) << 8), Array(pdu.dropFirst(5))))
            }
        case 0x18:
            s.pending = (opcode, 0, Array(pdu.dropFirst()))
        case 0x52:
            var l = line("write")
            l.handle = Int(handle)
            l.uuid = uuid(of: handle)
            l.value = Hex.string(pdu.dropFirst(3), .lower)
            return [l]
        default:
            s.pending = ATTPDU.responseOpcode(forRequest: opcode) != nil ? (opcode, handle, []) : s.pending
        }
        return []
    }

    private func toCentral(_ pdu: [UInt8], line: (String) -> Line, in s: inout State) -> [Line] {
        guard let opcode = pdu.first else { return [] }
        switch opcode {
        case 0x03:
            guard pdu.count >= 3 else { return [] }
            let server = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
            let mtu = Int(max(23, min(server, s.clientMTU)))
            s.snapshot.mtu = mtu
            var l = line("mtu")
            l.mtu = mtu
            return [l]
        case 0x0B, 0x0D:
            guard let pending = s.pending else { return [] }
            s.pending = nil
            var l = line("read")
            l.handle = Int(pending.handle)
            l.uuid = uuid(of: pending.handle)
            l.value = Hex.string(pdu.dropFirst(), .lower)
            return [l]
        case 0x13:
            guard let pending = s.pending else { return [] }
            s.pending = nil
            return written(pending.handle, pending.value, line: line, in: &s)
        case 0x19:
            s.pending = nil
            var values: [UInt16: [UInt8]] = [:]
            var order: [UInt16] = []
            for part in s.prepared {
                if values[part.handle] == nil { order.append(part.handle) }
                var value = values[part.handle] ?? []
                guard part.offset <= value.count else { continue }
                value.replaceSubrange(part.offset..<min(value.count, part.offset + part.value.count), with: part.value)
                values[part.handle] = value
            }
            s.prepared = []
            return order.flatMap { written($0, values[$0] ?? [], line: line, in: &s) }
        case 0x01:
            guard pdu.count >= 5, let pending = s.pending else { return [] }
            s.pending = nil
            if pending.opcode == 0x18 { s.prepared = [] }
            let event: String
            switch pending.opcode {
            case 0x0A, 0x0C: event = "read"
            case 0x12, 0x18: event = "write"
            default: return []
            }
            var l = line(event)
            l.handle = Int(UInt16(pdu[2]) | UInt16(pdu[3]) << 8)
            l.uuid = uuid(of: UInt16(pdu[2]) | UInt16(pdu[3]) << 8)
            if event == "write" { l.value = Hex.string(pending.value, .lower) }
            l.error = "0x" + Hex.byte(pdu[4]) + " " + ATTErrorCode.describe(pdu[4])
            return [l]
        case 0x1B, 0x1D:
            guard pdu.count >= 3 else { return [] }
            let handle = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
            var l = line(opcode == 0x1B ? "notified" : "indicated")
            l.handle = Int(handle)
            l.uuid = uuid(of: handle)
            l.value = Hex.string(pdu.dropFirst(3), .lower)
            s.snapshot.served += 1
            return [l]
        default:
            if ATTPDU.responseOpcode(forRequest: s.pending?.opcode ?? 0) == opcode { s.pending = nil }
            return []
        }
    }

    /// A write the server took: a CCCD's is a subscription (or its end), anything else a write.
    private func written(_ handle: UInt16, _ value: [UInt8], line: (String) -> Line, in s: inout State) -> [Line] {
        if let valueHandle = clientConfigurations[handle], value.count == 2 {
            let bits = UInt16(value[0]) | UInt16(value[1]) << 8
            var l = line(bits == 0 ? "unsubscribed" : "subscribed")
            l.handle = Int(valueHandle)
            l.uuid = uuid(of: valueHandle)
            if bits != 0 {
                l.indications = bits & 0x0002 != 0
                s.snapshot.subscriptions[valueHandle] = (l.uuid ?? "", bits & 0x0002 != 0)
            } else {
                s.snapshot.subscriptions[valueHandle] = nil
            }
            return [l]
        }
        var l = line("write")
        l.handle = Int(handle)
        l.uuid = uuid(of: handle)
        l.value = Hex.string(value, .lower)
        return [l]
    }

    private func uuid(of handle: UInt16) -> String? { uuids[handle] }

    // MARK: recording

    private func record(advertising setup: AdvertisingSetup, address: BLEAddress?, at t: Duration, in s: inout State) {
        guard let address else { return }
        if s.cassette == nil || s.cassette?.address != address { s.cassette = BLECassette.Peripheral(address: address) }
        guard s.lastAdvertising != setup, s.cassette?.advertising.count ?? 0 < BLECassette.Limits.advertisingRecords - 1 else { return }
        s.lastAdvertising = setup
        // Our own advertisement: no signal strength was measured (127).
        switch setup.form {
        case .legacy(let data, let response):
            let kind: BLECassette.AdvertisingKind = setup.connectable ? .connectable : (response.isEmpty ? .nonConnectable : .scannable)
            s.cassette?.advertising.append(BLECassette.AdvertisingRecord(at: t, kind: kind, rssi: 127, data: data))
            if !response.isEmpty {
                s.cassette?.advertising.append(BLECassette.AdvertisingRecord(at: t, kind: .scanResponse, rssi: 127, data: response))
            }
        case .extended(let data):
            s.cassette?.advertising.append(BLECassette.AdvertisingRecord(at: t, kind: setup.connectable ? .extended : .extendedNonConnectable,
                                                                         rssi: 127, data: data))
        }
    }

    private func recordATT(_ pdu: [UInt8], direction: BLECassette.Direction, at t: Duration, in s: inout State) {
        guard s.connection != nil, let start = s.connectionStart, !pdu.isEmpty else { return }
        guard s.connection?.att.count ?? 0 < BLECassette.Limits.attRecords, pdu.count <= BLECassette.Limits.attPDUBytes else {
            s.dropped += 1
            return
        }
        s.connection?.att.append(BLECassette.ATTRecord(at: t - start, direction: direction, pdu: pdu))
    }

    // MARK: words

    /// A JSON line as one line for people: `12.345 s  write 0x0012 (uuid) = 01aa`.
    static func human(_ l: Line) -> String {
        var text = String(format: "%8.3f s  ", l.t) + (l.side.map { $0.padding(toLength: 7, withPad: " ", startingAt: 0) } ?? "") + l.event
        if let central = l.central { text += " " + central }
        if let address = l.address { text += " from " + address }
        if let form = l.form { text += " (\(form))" }
        if let mtu = l.mtu { text += " \(mtu)" }
        if let handle = l.handle { text += " 0x" + Hex.word(UInt16(clamping: handle)) }
        // `relay` names what it can (the SIG's names and the mirror profile's): a conversation
        // with a device nobody here wrote is read by its names. `serve` knows its own device.
        if let uuid = l.uuid {
            let name = l.side == nil ? nil : BluetoothUUID(string: uuid).flatMap { BluetoothNames.bench.qualifiedName(of: $0) }
            text += " " + (name.map { "\($0) (\(uuid))" } ?? uuid)
        }
        if let indications = l.indications { text += indications ? " (indications)" : " (notifications)" }
        if let value = l.value { text += " = " + (value.isEmpty ? "(empty)" : value) }
        if let error = l.error { text += " refused: " + error }
        if let method = l.method { text += " (\(method))" }
        if let level = l.level { text += " level \(level)" }
        if let reason = l.reason { text += " reason " + reason }
        return text
    }

    /// One line of JSON, keys sorted. Written by hand: a served stream notifies thousands of
    /// values a second, and JSONEncoder costs more than serving one. Every string here is ours
    /// (event names, hex, addresses, UUIDs) except an error's wording, which is escaped.
    static func json(_ l: Line) -> String {
        var out = "{"
        out.reserveCapacity(96 + (l.value?.utf8.count ?? 0))
        var first = true
        func key(_ name: String) {
            if !first { out += "," }
            first = false
            out += "\""
            out += name
            out += "\":"
        }
        func text(_ name: String, _ value: String?) {
            guard let value else { return }
            key(name)
            out += quoted(value)
        }
        func number(_ name: String, _ value: Int?) {
            guard let value else { return }
            key(name)
            out += String(value)
        }
        func flag(_ name: String, _ value: Bool?) {
            guard let value else { return }
            key(name)
            out += value ? "true" : "false"
        }
        text("address", l.address)
        text("central", l.central)
        text("error", l.error)
        text("event", l.event)
        text("form", l.form)
        number("handle", l.handle)
        flag("indications", l.indications)
        number("level", l.level)
        text("method", l.method)
        number("mtu", l.mtu)
        text("reason", l.reason)
        flag("secureConnections", l.secureConnections)
        text("side", l.side)
        key("t")
        out += l.t.rounded() == l.t ? String(Int(l.t)) : String(l.t)
        text("uuid", l.uuid)
        text("value", l.value)
        out += "}\n"
        return out
    }

    /// A JSON string: quotes, backslashes and every control character escaped (C1 and DEL too,
    /// so no terminal acts on them).
    static func quoted(_ text: String) -> String {
        // Nearly always printable ASCII with nothing to escape (hex, UUIDs, event names).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
