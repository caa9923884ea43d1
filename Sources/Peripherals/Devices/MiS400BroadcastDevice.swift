import BLEProtocol
import HAL

/// Xiaomi's Body Composition Scale S400 (MJTZC01YM) as it broadcasts: MiBeacon version 5 frames
/// under service data 0xFE95 whose measurement is encrypted with the scale's 16-byte bind key
/// (`sim:?scale=mi-s400`). The `mi-scale` driver reads it given that key; the bench's S400 is
/// bound with ``demoBindKey``, a demonstration key like the bench backup's password.
///
/// Facts, from Bluetooth-Devices/xiaomi-ble (`src/xiaomi_ble/parser.py`: the frame header, the
/// nonce and associated data of `_decrypt_mibeacon_v4_v5`, object 0x6E16 in `obj6e16`;
/// `devices.py`: the product ids; `tests/test_parser.py`: captured S400 frames, which start
/// `48 59 D5 3B` and carry no MAC):
/// - service data: frame control 0x5948 (little endian: version 5 in bits 12–15, bit 3 encrypted,
///   bit 6 object included), the product id (0x3BD5, little endian), a frame counter; then the
///   encrypted objects, a 3-byte extended counter and a 4-byte MIC;
/// - AES-128-CCM with a 4-byte MIC, associated data the one byte 0x11, and a 12-byte nonce: the
///   MAC least significant byte first, service data bytes 2–4, the extended counter;
/// - object 0x6E16, 9 bytes: a profile id, then a little-endian 32-bit word with the mass in
///   bits 0–10 (kg × 10), the heart rate in bits 11–17 (bpm − 50; 0 and 127 mean none) and the
///   impedance in bits 18–31 (Ω × 10), then 4 bytes the parser does not read;
/// - CCM itself is RFC 3610's, written here on the block cipher (``AES128``), so the driver's
///   libcrypto decryption and this encryption are two implementations that must agree.
///
/// Our choices: while the display settles the scale sends frames without an object (control
/// 0x5908), since it broadcasts only a finished measurement; the measurement frame carries the
/// weight with the pulse (``heartRateBpm``) and the bench person's impedance (the real scale
/// sends its second impedance in a frame after it, which the driver does not need); stepping
/// off sends the all-zero measurement; the counters come from the scale's clock and the kind of
/// frame, so no two different frames share a nonce; no name (the frame fills the 31 bytes).
/// Mass has 11 bits: weights above 204.7 kg saturate.
package struct MiS400BroadcastDevice: ScaleBroadcastDevice {
    /// The driver that reads it.
    package static let driverID = "mi-scale"
    /// The bench family's own id (`sim:?scale=mi-s400`): `mi-scale` already names the Body
    /// Composition Scale 2 there.
    package static let familyID = "mi-s400"
    /// The bench S400's bind key: the ASCII of `hwprobe-s400demo`, `687770726f62652d7334303064656d6f`.
    /// A demonstration, not a secret (docs/cli.md §10 and `hwprobe weigh --help` say it).
    package static let demoBindKey: [UInt8] = Array("hwprobe-s400demo".utf8)
    /// The demo key as `--bind-key` takes it.
    package static var demoBindKeyHex: String { Hex.string(demoBindKey, .lower) }
    /// MJTZC01YM's product id, the one of the published captures.
    package static let productID: UInt16 = 0x3BD5
    static let serviceUUID = BluetoothUUID(0xFE95)
    static let measurementObject: UInt16 = 0x6E16

    package let name: String? = nil
    package let bindKey: [UInt8]
    /// The pulse the scale measures through the feet with a stable weight.
    package let heartRateBpm: Int?
    /// Which of the scale's user profiles the measurement is for.
    package let profileID: UInt8

    package init(bindKey: [UInt8] = MiS400BroadcastDevice.demoBindKey, heartRateBpm: Int? = 68, profileID: UInt8 = 1) {
        self.bindKey = bindKey
        self.heartRateBpm = heartRateBpm
        self.profileID = profileID
    }

    package func advertisement(_ shown: ScaleBroadcastFrame, name: String?, address: BLEAddress) -> Advertisement {
        Advertisement(flags: 0x06, localName: name, serviceData: [Self.serviceUUID: serviceData(shown, address: address)], connectable: false)
    }

    /// The 0xFE95 service data while the display shows `shown`.
    package func serviceData(_ shown: ScaleBroadcastFrame, address: BLEAddress) -> [UInt8] {
        let kind: UInt64 = shown.loadRemoved ? 2 : shown.reading.stable ? 1 : 0
        let serial = Self.seconds(shown.time) &* 4 &+ kind
        let frameCounter = UInt8(truncatingIfNeeded: serial)
        let extended = [UInt8(truncatingIfNeeded: serial >> 8), UInt8(truncatingIfNeeded: serial >> 16), UInt8(truncatingIfNeeded: serial >> 24)]
        let product = LittleEndian.u16(Self.productID)
        guard kind != 0 else { return [0x08, 0x59] + product + [frameCounter] }
        let header: [UInt8] = [0x48, 0x59] + product + [frameCounter]
        let objects = LittleEndian.u16(Self.measurementObject) + [9] + measurement(shown)
        // The nonce: the MAC least significant byte first, product id and frame counter, extended counter.
        let nonce = Array(address.bytes.prefix(6).reversed()) + product + [frameCounter] + extended
        let (ciphertext, mic) = Self.seal(objects, key: bindKey, nonce: nonce, associatedData: [0x11])
        return header + ciphertext + extended + mic
    }

    /// Object 0x6E16's value: the profile, the packed word, four bytes of zeros.
    func measurement(_ shown: ScaleBroadcastFrame) -> [UInt8] {
        guard !shown.loadRemoved else { return [profileID] + [UInt8](repeating: 0, count: 8) }
        let mass = UInt32(ScaleFrameFields.fixed(shown.reading.kilograms, per: 0.1, limit: 0x7FF))
        let pulse = heartRateBpm.map { UInt32(min(max($0 - 50, 1), 126)) } ?? 0
        let impedance = UInt32(ScaleFrameFields.fixed(shown.composition?.impedanceOhms, per: 0.1, limit: 0x3FFF))
        let word = mass | pulse << 11 | impedance << 18
        return [profileID] + LittleEndian.u32(word) + [0, 0, 0, 0]
    }

    /// Seconds on the scale's clock, as a count that only grows.
    static func seconds(_ time: ScaleClock.Civil) -> UInt64 {
        let days = UInt64(max(0, time.year)) &* 372 &+ UInt64(max(0, time.month)) &* 31 &+ UInt64(max(0, time.day))
        return ((days &* 24 &+ UInt64(max(0, time.hour))) &* 60 &+ UInt64(max(0, time.minute))) &* 60 &+ UInt64(max(0, time.second))
    }

    // MARK: AES-CCM (RFC 3610), M = 4, L = 3

    /// `plaintext` encrypted and authenticated under `key` (16 bytes) with a 12-byte `nonce`:
    /// the ciphertext and the 4-byte MIC. A key of another length seals nothing (an empty
    /// result the driver cannot verify).
    package static func seal(_ plaintext: [UInt8], key bytes: [UInt8], nonce: [UInt8], associatedData: [UInt8]) -> (ciphertext: [UInt8], mic: [UInt8]) {
        guard let key = SecurityKey(bytes: bytes), nonce.count == 12, plaintext.count < 1 << 24, associatedData.count < 0xFF00 else { return ([], []) }
        func block(_ input: [UInt8]) -> [UInt8] { (try? AES128.encrypt(key: key, block: input).bytes) ?? [UInt8](repeating: 0, count: 16) }
        func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (16 - bytes.count % 16) % 16) }
        let length = plaintext.count
        // B0: flags (Adata, (M − 2) / 2 = 1, L − 1 = 2), the nonce, the message length in L bytes.
        let flags: UInt8 = (associatedData.isEmpty ? 0 : 0x40) | 1 << 3 | 2
        var blocks = [flags] + nonce + [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        if !associatedData.isEmpty {
            blocks += padded([UInt8(associatedData.count >> 8), UInt8(associatedData.count & 0xFF)] + associatedData)
        }
        blocks += padded(plaintext)
        // CBC-MAC over B0, the associated data and the message.
        var x = [UInt8](repeating: 0, count: 16)
        for start in stride(from: 0, to: blocks.count, by: 16) {
            x = block(zip(x, blocks[start..<(start + 16)]).map { $0 ^ $1 })
        }
        // CTR: A_i = (L − 1), the nonce, the counter i in L bytes; S_0 masks the MAC.
        func counterBlock(_ i: Int) -> [UInt8] { block([2] + nonce + [UInt8(i >> 16 & 0xFF), UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF)]) }
        var ciphertext: [UInt8] = []
        ciphertext.reserveCapacity(length)
        for (index, start) in stride(from: 0, to: length, by: 16).enumerated() {
            let stream = counterBlock(index + 1)
            for offset in start..<min(start + 16, length) { ciphertext.append(plaintext[offset] ^ stream[offset - start]) }
        }
        let mic = zip(x.prefix(4), counterBlock(0).prefix(4)).map { $0 ^ $1 }
        return (ciphertext, mic)
    }
}
