import FuzzSupport
import HAL
import MiScale

/// Service data of a Xiaomi scale's advertisement, read both ways and through the driver as a
/// scan hands it over.
let driver = MiScaleDriver()

runFuzzer { bytes in
    _ = MiScaleFrame(bodyCompositionServiceData: bytes)?.reading
    _ = MiScaleFrame(weightScaleServiceData: bytes)?.reading
    var advertisement = Advertisement(connectable: false)
    advertisement.serviceData[MiScaleDriver.bodyCompositionService] = bytes
    _ = driver.reading(from: advertisement)
    advertisement.serviceData = [MiScaleDriver.weightScaleService: bytes]
    _ = driver.reading(from: advertisement)
}
