import BLEProtocol
import HAL
import MirrorV1
import Transports

/// A peripheral's discovered GATT database, and how a `gatt` option's ID becomes one of its
/// characteristics. Every ID is resolved and checked against what the characteristic allows
/// before anything is read or written, so a mistake in the last `--write` costs no write.
struct GattDatabase: Sendable {
    var address: BLEAddress
    var trees: [GATTServiceTree]

    /// What an option wants to do with a characteristic: each needs its own property.
    enum Use: Sendable {
        case read, write, writeCommand, subscribe
    }

    var characteristics: [GATTCharacteristic] { trees.flatMap(\.characteristics) }

    /// The characteristic `id` names, checked for `use`. A name that is not there is a device
    /// problem (exit 3: this device is not the one the person thought); one that is there but does
    /// not allow what was asked is a usage error (exit 2), and says what it does allow.
    func characteristic(_ id: CharacteristicID, for use: Use, option: String) throws(CLIFailure) -> GATTCharacteristic {
        let found: GATTCharacteristic
        switch id {
        case .uuid(let uuid):
            guard let first = characteristics.first(where: { $0.uuid == uuid }) else {
                let what = GattText.named(uuid)
                throw CLIFailure(kind: .device, message: "\(option) \(id): \(address) has no characteristic \(what)")
            }
            found = first
        case .handle(let handle):
            guard let match = characteristics.first(where: { $0.valueHandle == handle }) else {
                throw CLIFailure(kind: .device, message: "\(option) \(handle): " + notAValueHandle(handle))
            }
            found = match
        }
        try check(found, for: use, option: option, id: id)
        return found
    }

    private func check(_ c: GATTCharacteristic, for use: Use, option: String, id: CharacteristicID) throws(CLIFailure) {
        let label = "\(option) \(GattText.label(c))"
        let properties = c.properties.names.isEmpty ? "none" : c.properties.names.joined(separator: ", ")
        switch use {
        case .read where !c.properties.contains(.read):
            throw CLIFailure(kind: .usage, message: "\(label): the characteristic does not allow reads (its properties: \(properties))")
        case .write where !c.properties.contains(.write):
            let hint = c.properties.contains(.writeWithoutResponse) ? "; it takes Write Commands: use --write-command" : ""
            throw CLIFailure(kind: .usage, message: "\(label): the characteristic does not take Write Requests (its properties: \(properties))\(hint)")
        case .writeCommand where !c.properties.contains(.writeWithoutResponse):
            let hint = c.properties.contains(.write) ? "; it takes Write Requests: use --write" : ""
            throw CLIFailure(kind: .usage, message: "\(label): the characteristic does not take Write Commands (its properties: \(properties))\(hint)")
        case .subscribe:
            guard c.properties.contains(.notify) || c.properties.contains(.indicate) else {
                throw CLIFailure(kind: .usage, message: "\(label): the characteristic neither notifies nor indicates (its properties: \(properties))")
            }
            guard c.descriptors.contains(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
                throw CLIFailure(kind: .device, message: "\(label): the characteristic offers \(properties) but has no "
                                 + "Client Characteristic Configuration descriptor (2902) to turn them on")
            }
        default:
            break
        }
    }

    /// Why `handle` names no characteristic, pointing at the one the person probably meant.
    private func notAValueHandle(_ handle: UInt16) -> String {
        for c in characteristics {
            if c.declarationHandle == handle {
                return "handle \(handle) is the declaration of \(GattText.label(c)); give its value handle \(c.valueHandle)"
            }
            if let d = c.descriptors.first(where: { $0.handle == handle }) {
                return "handle \(handle) is descriptor \(GattText.named(d.uuid)) of \(GattText.label(c)), not a value handle; "
                    + "give the characteristic's value handle \(c.valueHandle)"
            }
        }
        if let tree = trees.first(where: { $0.service.start == handle }) {
            return "handle \(handle) is the declaration of service \(GattText.named(tree.service.uuid)), not a characteristic's value"
        }
        var message = "\(address) has no characteristic whose value handle is \(handle)"
        // Four digits may have been meant as a 16-bit UUID; digits alone are a handle by the contract.
        if (1000...9999).contains(handle), let uuid = BluetoothUUID(string: String(handle)),
           characteristics.contains(where: { $0.uuid == uuid }) {
            message += " (for the characteristic with UUID \(uuid), write it in 128 bits: \(GattText.canonical(uuid)))"
        }
        return message
    }
}

/// How `gatt` words UUIDs, characteristics, values and ATT errors, in the dump and in messages.
enum GattText {
    /// `2A19 (Battery Level)`, or the UUID alone when nobody names it.
    static func named(_ uuid: BluetoothUUID) -> String {
        BluetoothNames.bench.name(of: uuid).map { "\(uuid) (\($0))" } ?? uuid.description
    }

    /// `7B9E0005-3C2A-4F1B-9E6D-5A4C3B2A1F00 (scanState, handle 22)`.
    static func label(_ c: GATTCharacteristic) -> String {
        let name = BluetoothNames.bench.name(of: c.uuid).map { "\($0), " } ?? ""
        return "\(c.uuid) (\(name)handle \(c.valueHandle))"
    }

    /// Short enough for a status line: `scanState (handle 22)`, `2A19 (handle 18)`, `A5C30006… (handle 7)`.
    static func short(_ c: GATTCharacteristic) -> String {
        let uuid = c.uuid.description
        let name = BluetoothNames.bench.name(of: c.uuid) ?? (uuid.count > 8 ? uuid.prefix(8) + "…" : uuid)
        return "\(name) (handle \(c.valueHandle))"
    }

    /// The 128-bit spelling even of a 16-bit UUID.
    static func canonical(_ uuid: BluetoothUUID) -> String {
        let h = uuid.bytes.map { Hex.byte($0) }
        return [h[0..<4], h[4..<6], h[6..<8], h[8..<10], h[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// `0x05 Insufficient Authentication`: the code and its name, as the contract reports them.
    static func attError(_ code: UInt8, of uuid: BluetoothUUID? = nil) -> String {
        let hex = "0x" + Hex.byte(code)
        // A profile's own codes by the profile's names (the mirror's 0x80–0x82), not "Application Error".
        if let uuid, MirrorGATT.isMirror(uuid), let name = MirrorGATT.applicationErrors[code] { return "\(hex) \(name) (mirror-v1)" }
        var name = ATTErrorCode.describe(code)
        // Application and profile codes are named with their number already ("Application Error 0x80").
        if name.hasSuffix(" " + hex) { name.removeLast(hex.count + 1) }
        return "\(hex) \(name)"
    }

    /// The failure of a read or write the device refused: exit 1, as the contract has it.
    static func refused(_ failure: ATTFailure, _ doing: String, of uuid: BluetoothUUID? = nil) -> CLIFailure {
        CLIFailure(kind: .device, message: "\(doing): the device answered ATT error \(attError(failure.code, of: uuid))", exitOverride: 1)
    }

    /// The value as printable text, when every byte is (a name, a version string), for the dump.
    /// Shorter values are numbers far more often than words (a battery level of 87 is not "W").
    static func printable(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 3, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
