import HAL
import StandardScale
import Transports

/// The `wss` and `bcs` profiles: the Bluetooth SIG Weight Scale and Body Composition services'
/// mandatory characteristics with their properties and CCCDs, the feature values readable, and a
/// measurement indicated (each confirmed by our host) whose encoding parses for its flags
/// (Weight Scale Service 1.0 §3.1–3.2; Body Composition Service 1.0 §3.1–3.2). The measurement
/// checks wait up to 60 s: a person has to step on the scale.
enum WeightScaleChecks {
    static let weightScale = BluetoothUUID(0x181D)
    static let weightFeature = BluetoothUUID(0x2A9E)
    static let weightMeasurement = BluetoothUUID(0x2A9D)
    static let bodyComposition = BluetoothUUID(0x181B)
    static let bodyFeature = BluetoothUUID(0x2A9B)
    static let bodyMeasurement = BluetoothUUID(0x2A9C)

    static let wss = CheckProfile(name: "wss", title: "Weight Scale Service 1.0", checks: [
        serviceCheck("wss.service", "the Weight Scale service (0x181D) is a primary service", weightScale),
        characteristicCheck("wss.feature", "Weight Scale Feature (0x2A9E): read", weightFeature, in: weightScale, .read, cccd: false),
        characteristicCheck("wss.measurement", "Weight Measurement (0x2A9D): indicate, with a CCCD", weightMeasurement, in: weightScale, .indicate, cccd: true),
        ConformanceCheck(id: "wss.feature-value", title: "Weight Scale Feature reads as 4 bytes") { s throws(CheckFinding) in
            let value = try await readValue(weightFeature, in: weightScale, "Weight Scale Feature", s)
            do { _ = try WeightScaleFeature(parsing: value) } catch { throw .fail(expected: "a 4-byte feature value", seen: "\(CheckText.hex(value)): \(error)") }
        },
        ConformanceCheck(id: "wss.indication", title: "a Weight Measurement is indicated and its encoding matches its flags", deadline: .seconds(60)) { s throws(CheckFinding) in
            let value = try await firstIndication(weightMeasurement, in: weightScale, "Weight Measurement", s)
            do { _ = try WeightMeasurement(parsing: value) } catch { throw .fail(expected: "a Weight Measurement whose length fits its flags", seen: "\(CheckText.hex(value)): \(error)") }
        },
    ])

    static let bcs = CheckProfile(name: "bcs", title: "Body Composition Service 1.0", checks: [
        serviceCheck("bcs.service", "the Body Composition service (0x181B) is a primary service", bodyComposition),
        characteristicCheck("bcs.feature", "Body Composition Feature (0x2A9B): read", bodyFeature, in: bodyComposition, .read, cccd: false),
        characteristicCheck("bcs.measurement", "Body Composition Measurement (0x2A9C): indicate, with a CCCD", bodyMeasurement, in: bodyComposition, .indicate, cccd: true),
        ConformanceCheck(id: "bcs.indication", title: "a Body Composition Measurement is indicated and its encoding matches its flags", deadline: .seconds(60)) { s throws(CheckFinding) in
            let value = try await firstIndication(bodyMeasurement, in: bodyComposition, "Body Composition Measurement", s)
            do { _ = try BodyCompositionMeasurement(parsing: value) } catch {
                throw .fail(expected: "a Body Composition Measurement whose length fits its flags", seen: "\(CheckText.hex(value)): \(error)")
            }
        },
    ])

    static func serviceCheck(_ id: String, _ title: String, _ uuid: BluetoothUUID) -> ConformanceCheck {
        ConformanceCheck(id: id, title: title) { s throws(CheckFinding) in
            let trees = try await s.database()
            guard trees.contains(where: { $0.service.uuid == uuid }) else {
                throw .fail(expected: "primary service \(uuid)", seen: trees.map(\.service.uuid.description).joined(separator: ", "))
            }
        }
    }

    static func characteristicCheck(_ id: String, _ title: String, _ uuid: BluetoothUUID, in service: BluetoothUUID,
                                    _ properties: CharacteristicProperties, cccd: Bool) -> ConformanceCheck {
        ConformanceCheck(id: id, title: title) { s throws(CheckFinding) in
            let trees = try await s.database()
            guard let tree = trees.first(where: { $0.service.uuid == service }) else { throw .skip("needs service \(service)") }
            guard let found = tree.characteristics.first(where: { $0.uuid == uuid }) else { throw .fail(expected: "characteristic \(uuid)", seen: "none") }
            guard found.properties.isSuperset(of: properties) else {
                throw .fail(expected: "properties \(CheckText.properties(properties))", seen: CheckText.properties(found.properties))
            }
            if cccd, !found.descriptors.contains(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) {
                throw .fail(expected: "a 0x2902 descriptor on \(uuid)", seen: "none")
            }
        }
    }

    static func readValue(_ uuid: BluetoothUUID, in service: BluetoothUUID, _ name: String, _ s: CheckSession) async throws(CheckFinding) -> [UInt8] {
        let target = try await s.characteristic(uuid, in: service, name: name)
        switch try await s.read(target) {
        case .success(let value): return value
        case .failure(let code): throw .fail(expected: "\(name) readable", seen: "\(code)")
        }
    }

    static func firstIndication(_ uuid: BluetoothUUID, in service: BluetoothUUID, _ name: String, _ s: CheckSession) async throws(CheckFinding) -> [UInt8] {
        let target = try await s.characteristic(uuid, in: service, name: name)
        let values = try await s.subscribe(target)
        guard let value = await s.next(values, within: .seconds(55)) else {
            throw .fail(expected: "a \(name) indication within 55 s (someone on the scale)", seen: "none")
        }
        return value
    }
}
