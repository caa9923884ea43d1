import HAL

/// What the host stack did that a person watching it (`hwprobe -v`) wants to know, one case per
/// meaningful event. It is deliberately narrow and emitted from a few places only (opening the
/// controller, discovery, connecting, the ATT bearer, the GATT client's subscriptions): callers
/// see facts, never the stack's internals, so the hook survives a rebuild of the host core.
/// Transports never words these for people; the CLI does.
public enum HostEvent: Hashable, Sendable {
    /// The controller answered the init sequence; `address` is its public address when it has one.
    case controllerOpened(DeviceURI, address: BLEAddress?)
    /// One advertising report, merged with what was seen of that peripheral before. Sent for
    /// every report: a consumer that wants one line per peripheral removes the repeats.
    case peripheralSeen(DiscoveredDevice)
    /// LE Create Connection is about to go out.
    case connecting(BLEAddress)
    /// The peer accepted the connection; `link` is the handle later events name it by.
    case connected(BLEAddress, link: UInt16)
    /// The link with that handle ended, for the reason given.
    case disconnected(link: UInt16, DisconnectReason)
    /// The ATT_MTU both sides use from now on, whoever asked for the exchange.
    case mtuExchanged(link: UInt16, mtu: UInt16)
    /// Notifications (or indications) were enabled through the characteristic's CCCD.
    case subscribed(link: UInt16, characteristic: BluetoothUUID, valueHandle: UInt16, indications: Bool)
    /// The peer answered one of our requests with an ATT Error Response.
    case attError(link: UInt16, ATTFailure)
}

/// Receives host events. Called synchronously from inside the stack (actors included), so it must
/// return quickly and never call back into the stack.
public typealias HostEventHandler = @Sendable (HostEvent) -> Void
