import HAL

/// A broadcast scale driver whose devices encrypt their readings with a key of their own (the
/// Xiaomi S400's MiBeacon bind key). The keys are handed to the driver when it is made, as
/// ``VendorScaleOptions`` are, so every part of a run that reads through the registry (the
/// scale transport, `list`, `watch`) reads with the same keys.
public protocol BindKeyDriver: BroadcastScaleDriver {
    /// The same driver, reading with `keys`.
    func reading(with keys: BindKeys) -> Self
    /// Whether the device that sent `advertisement` encrypts its readings, so that only its key
    /// reads it (what `--save-key` is worth keeping a key for).
    func encryptsReadings(_ advertisement: Advertisement) -> Bool
}

extension DriverRegistry {
    /// The same drivers in the same order, those that read encrypted broadcasts given `keys`.
    public func with(bindKeys keys: BindKeys) -> DriverRegistry {
        DriverRegistry(drivers: drivers.map { driver in
            guard let keyed = driver as? any BindKeyDriver else { return driver }
            return keyed.reading(with: keys)
        })
    }
}
