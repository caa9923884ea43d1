import HAL

/// A QN scale that only broadcasts ("variant 3" of the ES-CS20M family: `qn-broadcast`).
///
/// Facts, from oliexdev/openScale `…/core/bluetooth/scales/QNHandlerBroadcast.kt`: the scale is
/// not connectable (ADV_NONCONN_IND) and lists no services; each reading is manufacturer data
/// under company 0xFFFF, whose bytes (after the company ID) are `AA BB`, the scale's address
/// (6 bytes, most significant first), then at 15 a status byte whose bit 5 (0x20) marks a stable
/// weight, and at 17–18 the weight, little-endian, in 0.01 kg: 19 bytes at least.
///
/// Our choices: the unknown bytes (8–14, 16) are 0, and the frame is 19 bytes; there is no room
/// for a name beside it in 31 bytes, so none is sent; stepping off sends a weight of 0 until the
/// scale sleeps (the handler ignores weights below 0.5 kg).
package struct QNBroadcastScaleDevice: ScaleBroadcastDevice {
    package static let driverID = "qn-broadcast"
    package static let companyID: UInt16 = 0xFFFF

    package let name: String? = nil

    package init() {}

    package func advertisement(_ shown: ScaleBroadcastFrame, name: String?, address: BLEAddress) -> Advertisement {
        Advertisement(flags: 0x06, localName: name, manufacturerData: [Self.companyID: frame(shown, address: address)], connectable: false)
    }

    func frame(_ shown: ScaleBroadcastFrame, address: BLEAddress) -> [UInt8] {
        let kilograms = shown.loadRemoved ? 0 : shown.reading.kilograms
        let weight = LittleEndian.u16(ScaleFrameFields.fixed(kilograms, per: 0.01))
        return [0xAA, 0xBB] + address.bytes.prefix(6) + [UInt8](repeating: 0, count: 7) + [shown.reading.stable && !shown.loadRemoved ? 0x20 : 0x00, 0x00]
            + weight
    }
}
