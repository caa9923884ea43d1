import HAL

/// One advertisement or scan response as a scanner saw it, from either the legacy or the
/// extended advertising report event.
public struct LEAdvertisingReport: Hashable, Sendable {
    /// Who sent it; the key scanners use to merge advertisements with scan responses.
    public var address: BLEAddress
    /// dBm; 127 means the controller could not measure it.
    public var rssi: Int8
    /// The raw AD structures (see `AdvertisingData.parse`).
    public var data: [UInt8]
    /// The advertiser accepts connections; for a scan response this is false (see the parser).
    public var connectable: Bool
    /// The advertiser answers scan requests, so an active scan may bring more data.
    public var scannable: Bool
    /// This is the answer to our scan request rather than the advertisement itself.
    public var isScanResponse: Bool
    /// Sent with a legacy advertising PDU (always true for the legacy report event).
    public var isLegacy: Bool
    /// The identity address behind `address` when it is a resolvable private address one of
    /// our bonds' IRKs made (``AddressResolver``); nil as parsed.
    public var resolvedIdentity: BLEAddress?

    /// Builds a report from values already decoded, as the event parser does.
    public init(address: BLEAddress, rssi: Int8, data: [UInt8], connectable: Bool, scannable: Bool,
                isScanResponse: Bool, isLegacy: Bool) {
        self.address = address
        self.rssi = rssi
        self.data = data
        self.connectable = connectable
        self.scannable = scannable
        self.isScanResponse = isScanResponse
        self.isLegacy = isLegacy
    }

    /// The data read as AD structures.
    public func advertisement() throws(HCIParseError) -> Advertisement {
        try AdvertisingData.parse(data, connectable: connectable)
    }
}

/// A new LE connection (or a failed attempt: see `status`).
public struct LEConnectionComplete: Hashable, Sendable {
    /// 0 when the connection was made; otherwise the HCI error code of the failed attempt.
    public var status: UInt8
    /// The connection handle every later command and ACL packet on this link carries; meaningless on failure.
    public var handle: UInt16
    /// 0 central, 1 peripheral.
    public var role: UInt8
    /// The peer's address as the controller reported it (an identity address when it resolved one).
    public var peer: BLEAddress
    /// Units of 1.25 ms.
    public var interval: UInt16
    /// Connection events the peripheral may skip.
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    /// Builds the event's values as decoded, as the event parser does.
    public init(status: UInt8, handle: UInt16, role: UInt8, peer: BLEAddress, interval: UInt16,
                latency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peer = peer
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// How many ACL packets the controller finished for one connection: that many buffers are free again.
public struct CompletedPackets: Hashable, Sendable {
    /// The link the freed buffers belonged to.
    public var handle: UInt16
    /// How many ACL packets finished since the last report, i.e. credits to give back.
    public var count: UInt16

    /// Builds one entry of a Number Of Completed Packets event.
    public init(handle: UInt16, count: UInt16) {
        self.handle = handle
        self.count = count
    }
}
