import HAL

/// What a vendor scale's protocol logic wants done next. The logic is a plain value fed the bytes
/// the scale notifies (sans-IO, like the host stack's core), so each family's parser and
/// handshake are tested with byte fixtures and no link; `VendorScaleSession` carries the actions out.
public enum VendorScaleAction: Hashable, Sendable {
    /// Write `value` to `characteristic` (a Write Request unless `withResponse` is false);
    /// `purpose` names it in errors ("the unit setting").
    case write(BluetoothUUID, [UInt8], withResponse: Bool, purpose: String)
    /// A weight the scale reported.
    case reading(WeightReading)
    /// The opening exchange is done: the scale will now send readings.
    case ready
    /// The scale broke its protocol or refused something it must accept: end with this error.
    case fail(ScaleError)
}

/// One vendor scale family's protocol: its layout choice, handshake and parser, as a value.
public protocol VendorScaleProtocol: Sendable {
    /// Given the characteristics the scale has (across the services asked for), the ones to
    /// subscribe to, in order. Throws `.unsupported` when a characteristic it needs is missing.
    mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID]
    /// What to do once subscribed: the opening writes, and `.ready` if nothing need be awaited.
    mutating func start() -> [VendorScaleAction]
    /// What to do about one value the scale notified or indicated.
    mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction]
    /// What the opening exchange is waiting for, in words, for when its deadline passes
    /// ("the scale's 0x12 information frame").
    var awaiting: String { get }
}
