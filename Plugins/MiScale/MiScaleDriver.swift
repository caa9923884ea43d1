import HAL
import Transports

/// Xiaomi's broadcasting scales. The Mi Smart Scale 2 and Mi Body Composition Scale 2 broadcast
/// each reading as service data under the standard service UUIDs instead of offering the GATT
/// profiles, so service data (more specific than a listed service) is what marks them. The Body
/// Composition Scale S400 broadcasts MiBeacon frames (service data 0xFE95) encrypted with its
/// bind key, and is marked by the product id in them (``S400Measurement/productIDs``): without
/// its key it is still claimed, and says that a key is what reads it.
public struct MiScaleDriver: Driver {
    /// Service data under 0x181B marks a Body Composition Scale 2 (13-byte frame).
    public static let bodyCompositionService = BluetoothUUID(0x181B)
    /// Service data under 0x181D marks a Smart Scale 2 (10-byte frame).
    public static let weightScaleService = BluetoothUUID(0x181D)
    /// Where in MiBeacon service data the product id stands (little endian, after the frame control).
    static let productIDOffset = 2

    /// The S400s' bind keys, by address; the other models need none.
    public var bindKeys: BindKeys

    /// One instance serves every Mi scale; `bindKeys` read the S400s among them.
    public init(bindKeys: BindKeys = BindKeys()) {
        self.bindKeys = bindKeys
    }

    /// Registry entry: id "mi-scale", matching service data (not just a listed service) under
    /// 0x181B or 0x181D, or MiBeacon service data naming an S400.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "mi-scale", name: "Xiaomi Mi Scale (broadcast)", kind: .scale,
                         rules: [.serviceData(Self.bodyCompositionService), .serviceData(Self.weightScaleService)]
                            + S400Measurement.productIDs.sorted().map {
                                .serviceDataBytes(MiBeaconFrame.serviceUUID, offset: Self.productIDOffset, bytes: LittleEndian.u16($0))
                            })
    }

    /// The S400's MiBeacon frame in `advertisement`, when it carries one.
    func s400Frame(_ advertisement: Advertisement) -> (data: [UInt8], frame: MiBeaconFrame)? {
        guard let data = advertisement.serviceData[MiBeaconFrame.serviceUUID], let frame = MiBeaconFrame(serviceData: data),
              S400Measurement.productIDs.contains(frame.productID) else { return nil }
        return (data, frame)
    }
}

extension MiScaleDriver: BroadcastScaleDriver {
    /// The reading in the scale's service data: 13 bytes under 0x181B (Body Composition Scale 2)
    /// or 10 bytes under 0x181D (Smart Scale 2). Any other length is not a Mi reading. Without the
    /// sender's address an S400's encrypted frame cannot be read (its nonce holds the address).
    public func reading(from advertisement: Advertisement) -> WeightReading? {
        if let data = advertisement.serviceData[Self.bodyCompositionService],
           let frame = MiScaleFrame(bodyCompositionServiceData: data) {
            return frame.reading
        }
        if let data = advertisement.serviceData[Self.weightScaleService],
           let frame = MiScaleFrame(weightScaleServiceData: data) {
            return frame.reading
        }
        if let (data, frame) = s400Frame(advertisement), !frame.isEncrypted {
            return (try? S400Measurement.read(serviceData: data, mac: [], key: nil)).flatMap(Self.reading)
        }
        return nil
    }

    /// As `reading(from:)`, and an S400's frames decrypted with the key for `address`. The
    /// S400 encrypts everything it measures, so without a key it throws `needsKey` for any frame
    /// of its (an idle one too: the person hears at once what is missing); with a key whose MIC
    /// check fails, `wrongKey` — never a reading from the wrong plaintext.
    public func reading(from advertisement: Advertisement, sentBy address: BLEAddress) throws(BroadcastReadingError) -> WeightReading? {
        guard let (data, frame) = s400Frame(advertisement) else { return reading(from: advertisement) }
        let key = bindKeys.key(for: address)?.key
        if key == nil, frame.isEncrypted || !frame.includesObjects { throw .needsKey(MiBeaconError.needsBindKey.description) }
        do throws(MiBeaconError) {
            return try S400Measurement.read(serviceData: data, mac: address.bytes, key: key).flatMap(Self.reading)
        } catch {
            switch error {
            case .wrongBindKey: throw .wrongKey(MiBeaconError.wrongBindKey.description)
            case .needsBindKey: throw .needsKey(error.description)
            // A frame whose MIC verified but whose objects do not add up, or a kind of frame not
            // read here, is no reading (as any other driver's unreadable frame).
            case .badBindKeyLength, .unsupported, .malformed: return nil
            }
        }
    }

    /// The S400 broadcasts only a finished measurement — it sends nothing until the weighing and
    /// the pulse are both done (RobertWojtowicz/export2garmin, manuals/S400_BLE.md) — so a frame
    /// with a weight is stable. Frames without one (the impedance-only frame, the all-zero
    /// step-off frame) are no weight reading.
    static func reading(_ measurement: S400Measurement) -> WeightReading? {
        guard let kilograms = measurement.kilograms else { return nil }
        return WeightReading(kilograms: kilograms, stable: true, impedanceOhms: measurement.lowFrequencyImpedance,
                             heartRateBpm: measurement.heartRate)
    }
}

extension MiScaleDriver: BindKeyDriver {
    /// This driver with `keys` for the S400s.
    public func reading(with keys: BindKeys) -> MiScaleDriver { MiScaleDriver(bindKeys: keys) }

    /// An S400's MiBeacon frame: its measurements are encrypted with its bind key.
    public func encryptsReadings(_ advertisement: Advertisement) -> Bool { s400Frame(advertisement) != nil }
}
