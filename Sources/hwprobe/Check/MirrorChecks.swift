import Foundation
import HAL
import Transports
import MirrorV1

/// The `mirror-v1` profile: what docs/mirror-gatt-v1.md requires that a client can observe, in the
/// specification's order — advertising, the database, values and their ranges, the write
/// validations and their error codes, the state machine and its deadlines, behaviour across a
/// reconnect. Each check names the section it comes from in its title's words.
///
/// The checks run in this order on one connection (a fresh one where the state must be idle),
/// and leave the mirror idle: the state checks abort what they start.
///
/// The specification's requirements a client can observe, and the checks that observe them:
/// - Advertising: Flags `adv.flags`; the service UUID `adv.service-uuid`; manufacturer data
///   `adv.manufacturer`; the name `adv.name`; connectable `adv.connectable`; the two forms
///   (extended with all four, or legacy with the rest in the scan response) `adv.form`;
///   advertising only while no central is connected `adv.only-while-disconnected`.
/// - The service and its table: `gatt.service`, `gatt.<name>` for each characteristic and its
///   properties, `gatt.cccd.<name>` for the three that notify.
/// - Notifications only after `01 00` is written to the CCCD: `notify.only-after-cccd`.
/// - Values: `value.deviceInfo`, `value.scanState` (idle on connecting, progress 0 while idle),
///   `value.scale`, `value.alignment`; `result` before complete refused with 0x02
///   `value.result-before-complete`.
/// - Writes: 0x81 `write.token-before-init`; 0x82 `write.start-not-ready`; 0x13
///   `write.control-unknown`, `write.init-opcode`, `write.init-units`; 0x0D
///   `write.control-length`, `write.init-length`, `write.token-length`; a Write Command ignored
///   `write.command-ignored`; 0x80 for confirm while not aligned `write.confirm-not-aligned`.
/// - The state machine: warmingUp when `scanToken` follows `init`, then ready `state.warm-up`;
///   abort returns to idle `state.abort` (from warmingUp), `scan.abort-complete` (from
///   complete); a whole scan's order `scan.order` (which also needs confirm accepted once
///   aligned, and the scale present and someone stable on it, as a client waits for them), the
///   phases' deadlines `scan.deadlines`, progress rising and 0 elsewhere `scan.progress`,
///   stepOff until the scale is vacated `scan.step-off`, `scale` about 5 a second while occupied
///   `scan.scale-rate`, `result` after complete and its encoding `scan.result`.
/// - `scale` notifying its flags' changes and `alignment` its changes: the scan waits on those
///   notifications, so a mirror that leaves them out fails `scan.deadlines`, naming the wait.
/// - Disconnection returns the mirror to idle, and notifications flow again once subscribed:
///   `state.reconnect` (from warmingUp) and `state.disconnect-mid-scan` (from scanning).
///
/// Not observable by a client, so not checked: start scan with the battery under 10 % giving
/// error 6 (only on a mirror with a flat battery, where `scan.order` is skipped on seeing it),
/// stepping off during scanning giving error 4 and an error lasting until reset (the person would
/// have to misbehave on cue); the client-side rules (deadlines' warnings, preflight, screens) are
/// the flow's, tested with the flows.
enum MirrorChecks {
    static let service = MirrorGATT.service

    /// The profile's characteristics: id, name, the properties the table gives.
    static let table: [(id: UInt8, name: String, properties: CharacteristicProperties)] = [
        (0x02, "deviceInfo", .read), (0x03, "init", .write), (0x04, "scanToken", .write),
        (0x05, "scanState", [.read, .notify]), (0x06, "scale", [.read, .notify]), (0x07, "alignment", [.read, .notify]),
        (0x08, "control", .write), (0x09, "result", .read),
    ]

    static func characteristic(_ name: String, _ session: CheckSession) async throws(CheckFinding) -> GATTCharacteristic {
        guard let entry = table.first(where: { $0.name == name }) else { throw .skip("no characteristic \(name) in the profile") }
        return try await session.characteristic(MirrorGATT.uuid(entry.id), in: service, name: "`\(name)`")
    }

    /// A height of 1780 mm, metric: the init the state checks write.
    static let initValue: [UInt8] = [0x01, 0xF4, 0x06, 0x00]
    static let token = [UInt8](repeating: 0xA5, count: 16)

    static let profile = CheckProfile(name: "mirror-v1", title: "Body-scan mirror GATT profile, version 1", checks: advertising + advertisingForms + database + notifications + values + writes + moreWrites + states + scan + midScan)

    // MARK: Advertising

    static let advertising: [ConformanceCheck] = [
        ConformanceCheck(id: "adv.flags", title: "advertising flags: LE General Discoverable, BR/EDR not supported") { s throws(CheckFinding) in
            guard let flags = s.advertisement.flags else { throw .fail(expected: "a Flags field", seen: "none") }
            guard flags & 0x02 != 0, flags & 0x04 != 0 else { throw .fail(expected: "flags with bits 1 and 2 set", seen: CheckText.hex([flags])) }
        },
        ConformanceCheck(id: "adv.service-uuid", title: "advertises the mirror service UUID") { s throws(CheckFinding) in
            guard s.advertisement.serviceUUIDs.contains(service) else {
                throw .fail(expected: "\(service) in the service UUID list",
                            seen: s.advertisement.serviceUUIDs.isEmpty ? "no service UUIDs" : s.advertisement.serviceUUIDs.map(\.description).joined(separator: ", "))
            }
        },
        ConformanceCheck(id: "adv.manufacturer", title: "manufacturer data: company 0xFFFF, \"MR\", protocol version 1, a 4-byte serial") { s throws(CheckFinding) in
            guard let data = s.advertisement.manufacturerData[0xFFFF] else {
                let others = s.advertisement.manufacturerData.keys.sorted().map { String(format: "0x%04X", $0) }
                throw .fail(expected: "manufacturer data of company 0xFFFF", seen: others.isEmpty ? "none" : "companies " + others.joined(separator: ", "))
            }
            guard data.count == 7, data[0] == 0x4D, data[1] == 0x52, data[2] == 1 else {
                throw .fail(expected: "4D 52 01 and 4 serial bytes", seen: CheckText.hex(data))
            }
        },
        ConformanceCheck(id: "adv.name", title: "a complete local name") { s throws(CheckFinding) in
            guard let name = s.advertisement.localName, !name.isEmpty else { throw .fail(expected: "a Complete Local Name", seen: "none") }
            guard s.advertisement.nameIsComplete else { throw .fail(expected: "the name complete", seen: "a shortened name \"\(name)\"") }
        },
        ConformanceCheck(id: "adv.connectable", title: "the advertisement is connectable") { s throws(CheckFinding) in
            guard s.advertisement.connectable else { throw .fail(expected: "a connectable advertisement", seen: "a non-connectable one") }
        },
    ]

    // MARK: The database

    static let database: [ConformanceCheck] = [
        ConformanceCheck(id: "gatt.service", title: "the mirror service is a primary service") { s throws(CheckFinding) in
            let trees = try await s.database()
            guard trees.contains(where: { $0.service.uuid == service }) else {
                throw .fail(expected: "primary service \(service)", seen: trees.map(\.service.uuid.description).joined(separator: ", "))
            }
        },
    ] + table.map { entry in
        ConformanceCheck(id: "gatt.\(entry.name)", title: "`\(entry.name)` (7B9E00\(String(format: "%02X", entry.id))) with properties \(CheckText.properties(entry.properties))") { s throws(CheckFinding) in
            let trees = try await s.database()
            guard let tree = trees.first(where: { $0.service.uuid == service }) else { throw .skip("needs the mirror service") }
            guard let found = tree.characteristics.first(where: { $0.uuid == MirrorGATT.uuid(entry.id) }) else {
                throw .fail(expected: "characteristic \(MirrorGATT.uuid(entry.id))", seen: "none")
            }
            guard found.properties.isSuperset(of: entry.properties) else {
                throw .fail(expected: "properties \(CheckText.properties(entry.properties))", seen: CheckText.properties(found.properties))
            }
        }
    } + table.filter { $0.properties.contains(.notify) }.map { entry in
        ConformanceCheck(id: "gatt.cccd.\(entry.name)", title: "`\(entry.name)` has a Client Characteristic Configuration descriptor") { s throws(CheckFinding) in
            let found = try await characteristic(entry.name, s)
            guard found.descriptors.contains(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
                throw .fail(expected: "a 0x2902 descriptor on `\(entry.name)`",
                            seen: found.descriptors.isEmpty ? "no descriptors" : found.descriptors.map(\.uuid.description).joined(separator: ", "))
            }
        }
    }

    // MARK: Values

    static let values: [ConformanceCheck] = [
        ConformanceCheck(id: "value.deviceInfo", title: "`deviceInfo`: 5 bytes, protocol version 1, battery 0–100 % or 0xFF") { s throws(CheckFinding) in
            let value = try await readValue("deviceInfo", s)
            guard value.count == 5 else { throw .fail(expected: "5 bytes", seen: "\(value.count): \(CheckText.hex(value))") }
            guard value[0] == 1 else { throw .fail(expected: "protocol version 1", seen: "\(value[0])") }
            guard value[4] <= 100 || value[4] == 0xFF else { throw .fail(expected: "battery 0–100 or 0xFF (mains)", seen: "\(value[4])") }
        },
        ConformanceCheck(id: "value.scanState", title: "`scanState`: 3 bytes, idle on connection, progress 0 outside scanning and processing") { s throws(CheckFinding) in
            let value = try await readValue("scanState", s)
            guard value.count == 3 else { throw .fail(expected: "3 bytes", seen: "\(value.count): \(CheckText.hex(value))") }
            guard value[0] <= 7 else { throw .fail(expected: "a state 0–7", seen: "\(value[0])") }
            guard value[0] == 0 else { throw .fail(expected: "state 0 (idle) on a new connection", seen: "state \(value[0])") }
            guard value[1] == 0 else { throw .fail(expected: "progress 0 while idle", seen: "\(value[1])") }
        },
        ConformanceCheck(id: "value.scale", title: "`scale`: 3 bytes, only flag bits 0–3") { s throws(CheckFinding) in
            let value = try await readValue("scale", s)
            guard value.count == 3 else { throw .fail(expected: "3 bytes", seen: "\(value.count): \(CheckText.hex(value))") }
            guard value[0] & 0xF0 == 0 else { throw .fail(expected: "flags within 0x0F", seen: CheckText.hex([value[0]])) }
        },
        ConformanceCheck(id: "value.alignment", title: "`alignment`: 3 bytes, aligned exactly when |angle| ≤ 3 and 40 ≤ distance ≤ 60") { s throws(CheckFinding) in
            let value = try await readValue("alignment", s)
            guard value.count == 3 else { throw .fail(expected: "3 bytes", seen: "\(value.count): \(CheckText.hex(value))") }
            let angle = Int(Int8(bitPattern: value[0])), distance = Int(value[1])
            let should = abs(angle) <= 3 && (40...60).contains(distance)
            guard (value[2] & 0x01 != 0) == should else {
                throw .fail(expected: "the aligned flag \(should ? "set" : "clear") at \(angle)° and \(distance) cm", seen: "it \(should ? "clear" : "set")")
            }
        },
        ConformanceCheck(id: "value.result-before-complete", title: "reading `result` before `complete` is refused with 0x02") { s throws(CheckFinding) in
            let result = try await characteristic("result", s)
            switch try await s.read(result) {
            case .success(let value): throw .fail(expected: "ATT error 0x02 (Read Not Permitted)", seen: "a value \(CheckText.hex(value))")
            case .failure(let code): if code.code != 0x02 { throw .fail(expected: "ATT error 0x02", seen: "\(code)") }
            }
        },
    ]

    // MARK: Writes

    static let writes: [ConformanceCheck] = [
        refusal("write.token-before-init", "`scanToken` before `init` is refused with 0x81", "scanToken", token, 0x81),
        refusal("write.start-not-ready", "start scan outside `ready` is refused with 0x82", "control", [0x02], 0x82),
        refusal("write.control-unknown", "an unknown `control` opcode is refused with 0x13", "control", [0x7F], 0x13),
        refusal("write.control-length", "a `control` value of the wrong length is refused with 0x0D", "control", [0x01, 0x00], 0x0D),
        refusal("write.init-opcode", "`init` with an opcode other than 0x01 is refused with 0x13", "init", [0x02, 0xF4, 0x06, 0x00], 0x13),
        refusal("write.init-units", "`init` with units other than 0 or 1 is refused with 0x13", "init", [0x01, 0xF4, 0x06, 0x02], 0x13),
        refusal("write.init-length", "`init` of the wrong length is refused with 0x0D", "init", [0x01, 0xF4], 0x0D),
    ]

    static func refusal(_ id: String, _ title: String, _ name: String, _ value: [UInt8], _ code: UInt8) -> ConformanceCheck {
        ConformanceCheck(id: id, title: title) { s throws(CheckFinding) in
            let target = try await characteristic(name, s)
            let answer = try await s.write(target, value)
            guard answer?.code == code else {
                throw .fail(expected: String(format: "ATT error 0x%02X for %@ ← %@", code, name, CheckText.hex(value)),
                            seen: answer.map(\.description) ?? "the write accepted")
            }
        }
    }

    // MARK: The state machine

    static let states: [ConformanceCheck] = [
        ConformanceCheck(id: "state.warm-up", title: "`init` then `scanToken`: warmingUp notified, then ready within 30 s", deadline: .seconds(35)) { s throws(CheckFinding) in
            try await warmUp(s)
            try await abort(s)
        },
        ConformanceCheck(id: "state.abort", title: "abort from warmingUp returns to idle", deadline: .seconds(15)) { s throws(CheckFinding) in
            let scanState = try await characteristic("scanState", s)
            let updates = try await s.subscribe(scanState)
            guard try await s.write(try await characteristic("init", s), initValue) == nil,
                  try await s.write(try await characteristic("scanToken", s), token) == nil else {
                throw .skip("needs `init` and `scanToken` accepted")
            }
            guard await s.next(updates, within: .seconds(5), where: { $0.first == 1 }) != nil else {
                throw .fail(expected: "a warmingUp notification within 5 s", seen: "none")
            }
            guard try await s.write(try await characteristic("control", s), [0x03]) == nil else {
                throw .fail(expected: "abort (control 0x03) accepted", seen: "it refused")
            }
            let now = try await readValue("scanState", s)
            guard now.first == 0 else { throw .fail(expected: "state 0 (idle) after abort", seen: "state \(now.first.map(String.init) ?? "?")") }
        },
        ConformanceCheck(id: "state.reconnect", title: "after a disconnect and reconnect: idle again, and notifications flow once subscribed",
                         deadline: .seconds(45)) { s throws(CheckFinding) in
            await s.disconnect()
            let value = try await readValue("scanState", s)
            guard value.first == 0 else { throw .fail(expected: "state 0 (idle) after reconnecting", seen: "state \(value.first.map(String.init) ?? "?")") }
            try await warmUp(s)
            try await abort(s)
        },
    ]

    /// Subscribes to `scanState`, writes `init` and `scanToken`, and waits for warmingUp, then ready.
    static func warmUp(_ s: CheckSession) async throws(CheckFinding) {
        let scanState = try await characteristic("scanState", s)
        let updates = try await s.subscribe(scanState)
        if let refused = try await s.write(try await characteristic("init", s), initValue) {
            throw .fail(expected: "`init` ← \(CheckText.hex(initValue)) accepted", seen: "\(refused)")
        }
        if let refused = try await s.write(try await characteristic("scanToken", s), token) {
            throw .fail(expected: "`scanToken` accepted after `init`", seen: "\(refused)")
        }
        guard await s.next(updates, within: .seconds(5), where: { $0.first == 1 }) != nil else {
            throw .fail(expected: "a `scanState` notification of warmingUp (1) within 5 s", seen: "none")
        }
        guard await s.next(updates, within: .seconds(30), where: { $0.first == 2 }) != nil else {
            throw .fail(expected: "a `scanState` notification of ready (2) within 30 s (the warm-up deadline)", seen: "none")
        }
    }

    static func abort(_ s: CheckSession) async throws(CheckFinding) {
        _ = try await s.write(try await characteristic("control", s), [0x03])
    }

    static func readValue(_ name: String, _ s: CheckSession) async throws(CheckFinding) -> [UInt8] {
        let target = try await characteristic(name, s)
        switch try await s.read(target) {
        case .success(let value): return value
        case .failure(let code): throw .fail(expected: "`\(name)` readable", seen: "\(code)")
        }
    }
}

/// How findings write bytes and properties.
enum CheckText {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "(empty)" : Hex.string(bytes, separator: " ")
    }

    /// A duration as findings say it: `30 s`, `2.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        return String(format: "%g s", Double(whole) + Double(attoseconds) / 1e18)
    }

    static func properties(_ properties: CharacteristicProperties) -> String {
        let all: [(CharacteristicProperties, String)] = [(.read, "read"), (.writeWithoutResponse, "write without response"), (.write, "write"),
                                                         (.notify, "notify"), (.indicate, "indicate")]
        let named = all.filter { properties.contains($0.0) }.map(\.1)
        return named.isEmpty ? "none" : named.joined(separator: ", ")
    }
}
