/// What a peripheral says about itself before anyone connects: the merged advertising data and
/// scan response. Drivers are matched against this, and broadcast scales are read from it.
public struct Advertisement: Hashable, Sendable {
    /// The AD Flags byte (discoverable mode, BR/EDR support); nil when the peripheral sent none.
    public var flags: UInt8?
    /// The name the peripheral advertises, complete or shortened; nil when it sent none.
    public var localName: String?
    /// True when the name came from a Complete Local Name, false for a Shortened one.
    public var nameIsComplete: Bool
    /// Service UUIDs from all the 16/32/128-bit lists, in the order first seen, each once.
    public var serviceUUIDs: [BluetoothUUID]
    /// Service Data by service UUID; broadcast scales put their readings here.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// Manufacturer Specific Data by company identifier; drivers match vendors and read broadcasts from it.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Transmit power the peripheral advertises, in dBm; nil when it sent none.
    public var txPower: Int8?
    /// Whether the peripheral accepts connections (from the report's event type).
    public var connectable: Bool

    /// Builds an advertisement; by default empty and connectable, as a test or fake usually wants.
    public init(flags: UInt8? = nil, localName: String? = nil, nameIsComplete: Bool = true,
                serviceUUIDs: [BluetoothUUID] = [], serviceData: [BluetoothUUID: [UInt8]] = [:],
                manufacturerData: [UInt16: [UInt8]] = [:], txPower: Int8? = nil, connectable: Bool = true) {
        self.flags = flags
        self.localName = localName
        self.nameIsComplete = nameIsComplete
        self.serviceUUIDs = serviceUUIDs
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.txPower = txPower
        self.connectable = connectable
    }

    /// Every service UUID a peripheral mentions, listed or as service data, each once.
    public var allServiceUUIDs: [BluetoothUUID] {
        var seen = Set<BluetoothUUID>()
        return (serviceUUIDs + serviceData.keys.sorted()).filter { seen.insert($0).inserted }
    }

    /// Folds a later report (e.g. a scan response) into this one: new facts win, lists are united.
    public func merging(_ other: Advertisement) -> Advertisement {
        var merged = self
        merged.flags = other.flags ?? flags
        if let name = other.localName, other.nameIsComplete || localName == nil || !nameIsComplete {
            merged.localName = name
            merged.nameIsComplete = other.nameIsComplete
        }
        for uuid in other.serviceUUIDs where !merged.serviceUUIDs.contains(uuid) {
            merged.serviceUUIDs.append(uuid)
        }
        merged.serviceData.merge(other.serviceData) { _, new in new }
        merged.manufacturerData.merge(other.manufacturerData) { _, new in new }
        merged.txPower = other.txPower ?? txPower
        merged.connectable = connectable || other.connectable
        return merged
    }
}
