import HAL

/// Every scale family the drivers speak, as a virtual peripheral, by the id of the driver that
/// reads it: what the simulated bench (`sim:?scale=ID`) and `hwprobe serve ID` put on the air.
/// The ids are the drivers' own (`DriverRegistry.linked`); this module cannot see the drivers, so
/// a test in hwprobe checks that each id here names one.
package enum ScalePeripherals {
    /// The ids `make` knows, for help text and usage errors.
    package static let driverIDs = [
        StandardScaleDevice.driverID, QNScaleDevice.driverID, QNBroadcastScaleDevice.driverID, YunmaiScaleDevice.driverID,
        OneByoneScaleDevice.driverID, BeurerSanitasScaleDevice.driverID, IcomonScaleDevice.driverID, MiScaleBroadcastDevice.driverID,
    ]

    /// Families a driver reads under another id, with a key: the S400 (`mi-s400`, read by
    /// `mi-scale` with its bind key, ``MiS400BroadcastDevice/demoBindKey`` on the bench).
    package static let keyedFamilyIDs = [MiS400BroadcastDevice.familyID]

    /// Every family `make` knows: the drivers' ids, then the keyed families.
    package static var familyIDs: [String] { driverIDs + keyedFamilyIDs }

    /// The scale family `driverID` reads (or a keyed family by its id, ``keyedFamilyIDs``), with a person of `weightKilograms` (clamped to
    /// `ScaleSimulation.weightRange`) and, for the families that report it, `composition`;
    /// nil for an id no family here has. Each advertises its model's own name unless `name` is
    /// given (the drivers of the vendor families know them by name, so another name may go
    /// unclaimed), first at `firstAdvertisement`, then every `interval`.
    package static func make(driverID: String, weightKilograms: Double, address: BLEAddress, composition: ScaleBodyComposition? = nil,
                             name: String? = nil, arrival: ScaleArrival = .automatic, interval: Duration = .milliseconds(100),
                             firstAdvertisement: Duration = .milliseconds(250), rssi: Int8 = -61) -> (any ScalePeripheral)? {
        func gatt<D: ScaleGATTDevice>(_ device: D) -> any ScalePeripheral {
            GATTScalePeripheral(device, weightKilograms: weightKilograms, composition: composition, address: address, name: name, arrival: arrival,
                                interval: interval, firstAdvertisement: firstAdvertisement, rssi: rssi)
        }
        func broadcast<D: ScaleBroadcastDevice>(_ device: D) -> any ScalePeripheral {
            BroadcastScalePeripheral(device, weightKilograms: weightKilograms, composition: composition, address: address, name: name,
                                     arrival: arrival, interval: interval, firstAdvertisement: firstAdvertisement, rssi: rssi)
        }
        switch driverID {
        case StandardScaleDevice.driverID: return gatt(StandardScaleDevice(measuresBodyComposition: composition != nil))
        case QNScaleDevice.driverID: return gatt(QNScaleDevice())
        case QNBroadcastScaleDevice.driverID: return broadcast(QNBroadcastScaleDevice())
        case YunmaiScaleDevice.driverID: return gatt(YunmaiScaleDevice())
        case OneByoneScaleDevice.driverID: return gatt(OneByoneScaleDevice())
        case BeurerSanitasScaleDevice.driverID: return gatt(BeurerSanitasScaleDevice())
        case IcomonScaleDevice.driverID: return gatt(IcomonScaleDevice())
        case MiScaleBroadcastDevice.driverID: return broadcast(MiScaleBroadcastDevice())
        case MiS400BroadcastDevice.familyID: return broadcast(MiS400BroadcastDevice())
        default: return nil
        }
    }
}
