import HAL

/// The device side of one connected scale family's protocol, as a value: its GATT layout, and
/// what it does about what the central writes and subscribes to and about what the display shows.
/// `GATTScalePeripheral` runs it behind an ATT server, so a family is only its facts (sans-IO,
/// like the drivers' `VendorScaleProtocol` on the other side of the link).
///
/// Characteristics are named by UUID, never by handle: the layout decides the handles.
///
/// One policy for every family: a frame the family could not have meant (a wrong length byte,
/// checksum or start byte) is refused with an ATT error, 0x0D for a length and 0x13 (Value Not
/// Allowed) for the rest, where most real scales drop it silently; a well-formed command the
/// family has but this scale does not serve is taken, or answered as the family refuses things.
/// An app under test learns of its mistake at once instead of by a timeout.
package protocol ScaleGATTDevice: Sendable {
    /// The id of the driver that speaks the other side (`qn-scale` …).
    static var driverID: String { get }

    /// The name the real device advertises (the one its driver recognises).
    var name: String { get }
    /// The service UUIDs it lists in its advertisement.
    var advertisedServices: [BluetoothUUID] { get }
    /// Its services after Generic Access and Generic Attribute, in handle order.
    var services: [ScaleGATTService] { get }
    /// What it answers an MTU exchange with (most scales keep the default 23).
    var preferredMTU: UInt16 { get }

    /// The central is ready for readings: the family's opening exchange is done (or, for a
    /// family without one, the central subscribed). Readings are sent only then, and an
    /// `automatic` person steps on at that moment.
    var isListening: Bool { get }

    /// A new link: whatever the last central set up is forgotten (nothing here is bonded).
    mutating func reset()
    /// A read of a characteristic whose value is not fixed.
    mutating func read(_ characteristic: BluetoothUUID, at now: Duration) -> Result<[UInt8], ATTRefusal>
    /// A Write Request (`withResponse`) or Write Command to one of its characteristics.
    mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID, withResponse: Bool, at now: Duration) -> ScaleDeviceReply
    /// The central wrote the CCCD of `characteristic` (bit 0 notifications, bit 1 indications).
    mutating func subscriptionChanged(_ characteristic: BluetoothUUID, to configuration: UInt16, at now: Duration) -> [ScaleDeviceOutput]
    /// The display changed while the central listens: the frames that say so. `composition` is
    /// the person's, for the families that send it with their final reading.
    mutating func show(_ event: ScaleSimulation.Event, composition: ScaleBodyComposition?, at now: Duration) -> [ScaleDeviceOutput]
}

extension ScaleGATTDevice {
    package var preferredMTU: UInt16 { 23 }

    package mutating func read(_ characteristic: BluetoothUUID, at now: Duration) -> Result<[UInt8], ATTRefusal> {
        .failure(.readNotPermitted)
    }
}

/// One service of a scale's GATT layout.
package struct ScaleGATTService: Sendable {
    package var uuid: BluetoothUUID
    package var characteristics: [CharacteristicDefinition]

    package init(_ uuid: BluetoothUUID, _ characteristics: [CharacteristicDefinition]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// What a scale sends by itself.
package enum ScaleDeviceOutput: Hashable, Sendable {
    /// A notification, when the central enabled notifications of the characteristic.
    case notify(BluetoothUUID, [UInt8])
    /// An indication, when the central enabled indications (one at a time, each confirmed).
    case indicate(BluetoothUUID, [UInt8])
    /// The scale ends the link (a disconnect command, or switching itself off).
    case disconnect(reason: UInt8)
}

/// A scale's answer to a write: a refusal (an ATT error for a Write Request) or nothing, and
/// whatever it sends because of it.
package struct ScaleDeviceReply: Hashable, Sendable {
    package var refusal: ATTRefusal?
    package var outputs: [ScaleDeviceOutput]

    package init(refusal: ATTRefusal? = nil, outputs: [ScaleDeviceOutput] = []) {
        self.refusal = refusal
        self.outputs = outputs
    }

    /// Taken, nothing to send.
    package static let accepted = ScaleDeviceReply()

    package static func refused(_ refusal: ATTRefusal) -> ScaleDeviceReply { ScaleDeviceReply(refusal: refusal) }
}
