import FuzzSupport
import HAL
import MiScale
import Transports

/// Service data of a Xiaomi scale's advertisement, read both ways and through the driver as a
/// scan hands it over; and as an S400's MiBeacon frame (0xFE95), decrypted with a fixed bind key
/// and read without one; and through the driver with a key for any sender, as `--bind-key` does.
let driver = MiScaleDriver()
let keyed: MiScaleDriver = {
    var keys = BindKeys()
    if let key = BindKey.make(Array(0..<16)) { keys.setForAnyDevice(key) }
    return MiScaleDriver(bindKeys: keys)
}()
let sender = BLEAddress(string: "8C:D0:B2:F6:BE:EF") ?? BLEAddress(string: "00:00:00:00:00:01")

runFuzzer { bytes in
    _ = MiScaleFrame(bodyCompositionServiceData: bytes)?.reading
    _ = MiScaleFrame(weightScaleServiceData: bytes)?.reading
    var advertisement = Advertisement(connectable: false)
    advertisement.serviceData[MiScaleDriver.bodyCompositionService] = bytes
    _ = driver.reading(from: advertisement)
    advertisement.serviceData = [MiScaleDriver.weightScaleService: bytes]
    _ = driver.reading(from: advertisement)
    _ = try? S400Measurement.read(serviceData: bytes, mac: [0x8C, 0xD0, 0xB2, 0xF6, 0xBE, 0xEF], bindKey: Array(0..<16))
    _ = try? S400Measurement.read(serviceData: bytes, mac: [0x8C, 0xD0, 0xB2, 0xF6, 0xBE, 0xEF], bindKey: nil)
    if let sender {
        advertisement.serviceData = [MiBeaconFrame.serviceUUID: bytes]
        _ = try? driver.reading(from: advertisement, sentBy: sender)
        _ = try? keyed.reading(from: advertisement, sentBy: sender)
    }
}
