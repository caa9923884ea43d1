/// One peripheral seen while discovering: enough to show it in a list and to connect to it.
public struct DiscoveredDevice: Hashable, Sendable, Identifiable {
    /// The peripheral's address and its type, which is what `connect(to:)` needs.
    public var address: BLEAddress
    /// Received signal strength in dBm at the time of this report; nearer devices read higher.
    public var rssi: Int8
    /// Everything the peripheral advertised so far, scan responses merged in.
    public var advertisement: Advertisement
    /// The resolvable private address the peripheral advertised from, when a bond's IRK
    /// resolved it and `address` is the identity address behind it; nil when `address` is what
    /// was on air. A host connecting to `address` connects to this one.
    public var resolvedFrom: BLEAddress?

    /// Builds one sighting as a transport reports it.
    public init(address: BLEAddress, rssi: Int8, advertisement: Advertisement, resolvedFrom: BLEAddress? = nil) {
        self.address = address
        self.rssi = rssi
        self.advertisement = advertisement
        self.resolvedFrom = resolvedFrom
    }

    /// The address the peripheral is advertising from now: the private one when resolved.
    public var onAirAddress: BLEAddress { resolvedFrom ?? address }

    /// The address, so lists keep one row per peripheral as its reports change (the identity
    /// for a resolved device, so one row however often it renews its private address).
    public var id: BLEAddress { address }
    /// The advertised local name, or nil for a device that gives none.
    public var name: String? { advertisement.localName }
}
