import HAL
import Transports

/// What the Xiaomi Body Composition Scale S400 (MJTZC01YM, MJTZC03YM) says in its encrypted
/// MiBeacon advertisements: object 0x6E16, 9 bytes — profile id (1), a 32-bit word packing mass
/// (bits 0–10, kg × 10), heart rate (bits 11–17, bpm − 50; 0 and 127 mean none) and impedance
/// (bits 18–31, Ω × 10), then 4 bytes not decoded. Layout and product ids from the
/// Bluetooth-Devices/xiaomi-ble parser (`obj6e16`, `devices.py`), whose tests hold captured
/// frames with their bind key.
///
/// The scale sends a frame with the weight (and the 50 kHz impedance), then one with mass and
/// heart rate zero carrying the 250 kHz impedance, and an all-zero frame when the person steps off.
public struct S400Measurement: Hashable, Sendable {
    /// The S400's product ids (xiaomi-ble `devices.py`: MJTZC01YM and MJTZC03YM).
    public static let productIDs: Set<UInt16> = [0x30D9, 0x3BD5, 0x48CF, 0x4B05]
    /// The MiBeacon object type that carries the measurement.
    public static let objectType: UInt16 = 0x6E16

    /// Which user profile on the scale the reading is for.
    public var profileID: UInt8
    /// Kilograms; nil in the impedance-only and step-off frames.
    public var kilograms: Double?
    /// Beats per minute, when the scale measured it.
    public var heartRate: Int?
    /// Ohms at 50 kHz (with the weight).
    public var lowFrequencyImpedance: Double?
    /// Ohms at 250 kHz (the frame after the weight).
    public var highFrequencyImpedance: Double?
    /// The person stepped off (everything zero).
    public var steppedOff: Bool

    /// From object 0x6E16's 9 bytes.
    public init?(object value: [UInt8]) {
        guard value.count == 9 else { return nil }
        profileID = value[0]
        let word = UInt32(value[1]) | UInt32(value[2]) << 8 | UInt32(value[3]) << 16 | UInt32(value[4]) << 24
        let mass = word & 0x7FF
        let heart = (word >> 11) & 0x7F
        let impedance = word >> 18
        steppedOff = mass == 0 && heart == 0 && impedance == 0
        kilograms = mass == 0 ? nil : Double(mass) / 10
        heartRate = heart > 0 && heart < 127 ? Int(heart) + 50 : nil
        lowFrequencyImpedance = mass != 0 && impedance != 0 ? Double(impedance) / 10 : nil
        highFrequencyImpedance = mass == 0 && heart == 0 && impedance != 0 ? Double(impedance) / 10 : nil
    }

    /// The measurement in an S400's 0xFE95 service data, decrypted with `bindKey`; nil when the
    /// frame carries none (another object, an idle frame). `mac` is the advertiser's address,
    /// most significant byte first.
    public static func read(serviceData: [UInt8], mac: [UInt8], bindKey: [UInt8]?) throws(MiBeaconError) -> S400Measurement? {
        try read(serviceData: serviceData) { frame throws(MiBeaconError) in
            guard let bindKey else { throw .needsBindKey }
            return try MiBeaconCipher.decrypt(frame, mac: mac, bindKey: bindKey)
        }
    }

    /// The same with a ``BindKey`` (the driver's way: the key's bytes are never copied out).
    public static func read(serviceData: [UInt8], mac: [UInt8], key: BindKey?) throws(MiBeaconError) -> S400Measurement? {
        try read(serviceData: serviceData) { frame throws(MiBeaconError) in
            guard let key else { throw .needsBindKey }
            return try MiBeaconCipher.decrypt(frame, mac: mac, bindKey: key)
        }
    }

    private static func read(serviceData: [UInt8], decrypt: (MiBeaconFrame) throws(MiBeaconError) -> [UInt8]) throws(MiBeaconError) -> S400Measurement? {
        guard let frame = MiBeaconFrame(serviceData: serviceData) else { throw .unsupported("shorter than its header") }
        guard !frame.isMesh else { throw .unsupported("mesh frames") }
        guard frame.includesObjects else { return nil }
        let objects = frame.isEncrypted ? try decrypt(frame) : Array(serviceData[frame.objectOffset...])
        var offset = 0
        while offset + 3 <= objects.count {
            let type = UInt16(objects[offset]) | UInt16(objects[offset + 1]) << 8
            let length = Int(objects[offset + 2])
            guard offset + 3 + length <= objects.count else { throw .malformed("object 0x\(Hex.word(type)) says \(length) bytes, \(objects.count - offset - 3) left") }
            let value = Array(objects[(offset + 3)..<(offset + 3 + length)])
            if type == objectType {
                guard let measurement = S400Measurement(object: value) else { throw .malformed("object 0x6E16 has \(length) bytes, not 9") }
                return measurement
            }
            offset += 3 + length
        }
        return nil
    }
}
