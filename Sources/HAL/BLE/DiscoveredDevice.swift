/// One peripheral seen while discovering: enough to show it in a list and to connect to it.
public struct DiscoveredDevice: Hashable, Sendable, Identifiable {
    public var address: BLEAddress
    public var rssi: Int8
    public var advertisement: Advertisement

    public init(address: BLEAddress, rssi: Int8, advertisement: Advertisement) {
        self.address = address
        self.rssi = rssi
        self.advertisement = advertisement
    }

    public var id: BLEAddress { address }
    public var name: String? { advertisement.localName }
}
