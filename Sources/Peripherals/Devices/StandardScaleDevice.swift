import BLEProtocol
import HAL

/// The Bluetooth SIG's own scale: the Weight Scale Service (0x181D), and with a body composition
/// the Body Composition Service (0x181B) too, as a scale that measures both offers them
/// (`standard-scale`).
///
/// Facts, from the SIG's specifications: Weight Scale Service 1.0 and Body Composition Service
/// 1.0 (§3.1 the feature characteristics, §3.2 the measurements, both indicated), and the GATT
/// Specification Supplement's field layouts:
/// - Weight Measurement (0x2A9D): flags u8 (bit 0 imperial), weight u16 in 0.005 kg or 0.01 lb;
///   0xFFFF is "measurement unsuccessful".
/// - Weight Scale Feature (0x2A9E): u32, weight resolution in bits 3–6 (4: 0.05 kg / 0.1 lb).
/// - Body Composition Measurement (0x2A9C): flags u16, body fat u16 in 0.1 % (always present),
///   then the fields the flags announce in this order: muscle percentage (bit 4, 0.1 %), body
///   water mass (bit 8, mass units), impedance (bit 9, 0.1 Ω), weight (bit 10, mass units).
/// - Body Composition Feature (0x2A9B): u32, one bit per field it can send (3 muscle percentage,
///   7 body water mass, 8 impedance, 9 weight) and the mass resolution in bits 11–14.
///
/// The standard has no "stable" flag: every reading the display shows is indicated as a Weight
/// Measurement (a central tells the final one by its repeating), and the body composition comes
/// once, after the final weight, with that weight in it. The scale shows its resolution's steps,
/// so a weight is rounded to 0.05 kg (or 0.1 lb) before it is sent.
package struct StandardScaleDevice: ScaleGATTDevice {
    package static let driverID = "standard-scale"
    package static let weightScaleService = BluetoothUUID(0x181D)
    package static let weightMeasurement = BluetoothUUID(0x2A9D)
    package static let weightScaleFeature = BluetoothUUID(0x2A9E)
    package static let bodyCompositionService = BluetoothUUID(0x181B)
    package static let bodyCompositionMeasurement = BluetoothUUID(0x2A9C)
    package static let bodyCompositionFeature = BluetoothUUID(0x2A9B)

    /// Resolution code 4 (WSS Feature bits 3–6, BCS Feature bits 11–14): 0.05 kg, 0.1 lb.
    static let resolutionCode: UInt32 = 4
    static let kilogramStep = 0.05
    static let poundStep = 0.1

    package let name: String
    /// Kilograms or pounds on the display, and so in the measurements (the flags' bit 0).
    package let displayUnit: WeightUnit
    /// Whether it also offers the Body Composition Service.
    package let measuresBodyComposition: Bool
    package private(set) var weightIndications = false
    package private(set) var compositionIndications = false

    /// Jin is not a unit the standard has: it shows kilograms instead.
    package init(name: String = "Bench Scale", displayUnit: WeightUnit = .kilograms, measuresBodyComposition: Bool = false) {
        self.name = name
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.measuresBodyComposition = measuresBodyComposition
    }

    package var advertisedServices: [BluetoothUUID] {
        measuresBodyComposition ? [Self.weightScaleService, Self.bodyCompositionService] : [Self.weightScaleService]
    }

    package var services: [ScaleGATTService] {
        // Weight Scale Feature: the resolution only (no time stamps, users or BMI).
        var services = [ScaleGATTService(Self.weightScaleService, [
            CharacteristicDefinition(Self.weightScaleFeature, .read, value: LittleEndian.u32(Self.resolutionCode << 3)),
            CharacteristicDefinition(Self.weightMeasurement, .indicate),
        ])]
        if measuresBodyComposition {
            let fields: UInt32 = 1 << 3 | 1 << 7 | 1 << 8 | 1 << 9
            services.append(ScaleGATTService(Self.bodyCompositionService, [
                CharacteristicDefinition(Self.bodyCompositionFeature, .read, value: LittleEndian.u32(fields | Self.resolutionCode << 11)),
                CharacteristicDefinition(Self.bodyCompositionMeasurement, .indicate),
            ]))
        }
        return services
    }

    /// A central listens once it has asked for either measurement's indications (WSS 1.0 §3.2:
    /// measurements go to a client that configured indications).
    package var isListening: Bool { weightIndications || compositionIndications }

    package mutating func reset() {
        weightIndications = false
        compositionIndications = false
    }

    package mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply {
        .refused(ATTRefusal(ATTErrorCode.writeNotPermitted))
    }

    package mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput] {
        let indications = configuration & 0x0002 != 0
        if characteristic == Self.weightMeasurement { weightIndications = indications }
        if characteristic == Self.bodyCompositionMeasurement { compositionIndications = indications }
        return []
    }

    package mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput] {
        guard case .reading(let reading) = event else { return [] }
        var outputs: [ScaleDeviceOutput] = [.indicate(Self.weightMeasurement, weightMeasurement(reading.kilograms))]
        if reading.stable, measuresBodyComposition, let composition, let value = bodyCompositionMeasurement(reading.kilograms, composition) {
            outputs.append(.indicate(Self.bodyCompositionMeasurement, value))
        }
        return outputs
    }

    /// The weight in the measurements' mass units (0.005 kg or 0.01 lb), rounded to the display's step.
    func massUnits(_ kilograms: Double) -> UInt16 {
        guard displayUnit == .pounds else {
            return ScaleFrameFields.fixed(kilograms, per: Self.kilogramStep, limit: 0xFFFE / 10) * 10
        }
        return ScaleFrameFields.fixed(kilograms / 0.45359237, per: Self.poundStep, limit: 0xFFFE / 10) * 10
    }

    /// Flags (bit 0: imperial), then the weight; "unsuccessful" (0xFFFF) for a weight that is not one.
    func weightMeasurement(_ kilograms: Double) -> [UInt8] {
        let flags: UInt8 = displayUnit == .pounds ? 0x01 : 0x00
        guard kilograms.isFinite, kilograms >= 0 else { return [flags] + LittleEndian.u16(0xFFFF) }
        return [flags] + LittleEndian.u16(massUnits(kilograms))
    }

    /// Body fat, then whichever of muscle percentage, body water mass and impedance the person
    /// has, then the weight; nil without a body fat figure (the field is mandatory, and 0xFFFF
    /// would say the measurement failed). 12 bytes at most: one indication even at ATT_MTU 23.
    func bodyCompositionMeasurement(_ kilograms: Double, _ composition: ScaleBodyComposition) -> [UInt8]? {
        guard let fat = composition.fatPercent else { return nil }
        var flags: UInt16 = 1 << 10
        if displayUnit == .pounds { flags |= 1 }
        var fields: [UInt8] = []
        if let muscle = composition.musclePercent {
            flags |= 1 << 4
            fields += LittleEndian.u16(ScaleFrameFields.fixed(muscle, per: 0.1, limit: 1000))
        }
        if let water = composition.waterPercent {
            flags |= 1 << 8
            fields += LittleEndian.u16(massUnits(kilograms * water / 100))
        }
        if let impedance = composition.impedanceOhms {
            flags |= 1 << 9
            fields += LittleEndian.u16(ScaleFrameFields.fixed(impedance, per: 0.1, limit: 0xFFFE))
        }
        fields += LittleEndian.u16(massUnits(kilograms))
        return LittleEndian.u16(flags) + LittleEndian.u16(ScaleFrameFields.fixed(fat, per: 0.1, limit: 1000)) + fields
    }
}
