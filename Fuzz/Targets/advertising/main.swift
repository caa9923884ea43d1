import BLEProtocol
import FuzzSupport
import HAL
import MiScale
import MirrorV1
import StandardScale
import Transports

/// Advertising data (the AD structures of an advertisement or scan response), parsed, claimed by
/// the driver registry as a scan would, and written back: what we write must read back the same.
let registry = DriverRegistry(drivers: [StandardScaleDriver(), MiScaleDriver(), MirrorV1Driver()])

runFuzzer { bytes in
    guard let advertisement = try? AdvertisingData.parse(bytes) else { return }
    _ = registry.claim(.advertisement(advertisement))
    let written = AdvertisingData.encode(advertisement)
    let again: Advertisement
    do { again = try AdvertisingData.parse(written) } catch {
        preconditionFailure("our own advertising data does not parse: \(error)")
    }
    precondition(AdvertisingData.encode(again) == written, "advertising data does not write back the same")
}
