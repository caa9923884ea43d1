import HAL

/// A Xiaomi MiBeacon frame: the service data Xiaomi devices broadcast under UUID 0xFE95. The
/// layout is not published by Xiaomi; it comes from the Bluetooth-Devices/xiaomi-ble parser
/// (`XiaomiBluetoothDeviceData._parse_xiaomi`), which Home Assistant uses:
///
///   0–1: frame control, little endian — bit 3 encrypted, bit 4 MAC included, bit 5 capability
///        included, bit 6 object included, bit 7 mesh, bits 12–15 version (4 and 5: AES-CCM)
///   2–3: product id, little endian (the S400 is 0x3BD5, 0x30D9, 0x48CF, 0x4B05…)
///   4:   frame counter
///   then the MAC (6 bytes, least significant first) if bit 4, a capability byte if bit 5 (and
///   an IO byte after it if the capability has bit 5), then the object data: for version 4/5
///   encrypted frames, the ciphertext, a 3-byte extended counter and the 4-byte MIC.
public struct MiBeaconFrame: Hashable, Sendable {
    /// The 16-bit service UUID MiBeacon service data comes under.
    public static let serviceUUID = BluetoothUUID(0xFE95)

    /// What the frame holds and how (bits listed above).
    public var frameControl: UInt16
    /// Which product sent it (the S400's ids: ``S400Measurement/productIDs``).
    public var productID: UInt16
    /// Counts frames; part of the nonce.
    public var frameCounter: UInt8
    /// The MAC the frame carries (most significant byte first), when it carries one.
    public var macAddress: [UInt8]?
    /// Where the object data (or, encrypted, the ciphertext) starts in the service data.
    public var objectOffset: Int
    /// The whole service data, for decryption.
    public var bytes: [UInt8]

    /// MiBeacon version (frame control bits 12–15).
    public var version: Int { Int(frameControl >> 12) }
    /// The objects are encrypted (bit 3).
    public var isEncrypted: Bool { frameControl & 0x0008 != 0 }
    /// The frame carries objects (bit 6); idle frames do not.
    public var includesObjects: Bool { frameControl & 0x0040 != 0 }
    /// A mesh device's frame (bit 7), whose layout is not read here.
    public var isMesh: Bool { frameControl & 0x0080 != 0 }

    /// Reads the header of 0xFE95 service data; nil when it is too short for what its frame
    /// control says it holds.
    public init?(serviceData data: [UInt8]) {
        guard data.count >= 5 else { return nil }
        frameControl = UInt16(data[0]) | UInt16(data[1]) << 8
        productID = UInt16(data[2]) | UInt16(data[3]) << 8
        frameCounter = data[4]
        bytes = data
        var offset = 5
        if frameControl & 0x0010 != 0 {
            guard data.count >= offset + 6 else { return nil }
            macAddress = Array(data[offset..<offset + 6].reversed())
            offset += 6
        }
        if frameControl & 0x0020 != 0 {
            guard data.count >= offset + 1 else { return nil }
            let capability = data[offset]
            offset += 1
            if capability & 0x20 != 0 {
                guard data.count >= offset + 1 else { return nil }
                offset += 1
            }
        }
        objectOffset = offset
    }
}
