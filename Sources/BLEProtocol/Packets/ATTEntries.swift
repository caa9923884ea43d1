import HAL

/// A range of attribute handles, as Find By Type Value Response lists them (found handle, group end).
public struct ATTHandleRange: Hashable, Sendable {
    /// The first handle of the range: the attribute that matched.
    public var start: UInt16
    /// The last handle of the range (the group end); the next search starts after it.
    public var end: UInt16

    /// Builds a range from its two ends as the response listed them.
    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }
}

/// One Find Information Response entry: an attribute's handle and type.
public struct ATTHandleUUID: Hashable, Sendable {
    /// The attribute's handle, for reading or writing it later.
    public var handle: UInt16
    /// The attribute's type, e.g. a characteristic or descriptor UUID.
    public var uuid: BluetoothUUID

    /// Builds one entry from a handle and the type found at it.
    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// One Read By Type Response entry. All entries of one response have values of the same length.
public struct ATTHandleValue: Hashable, Sendable {
    /// The handle the value was read from; for a characteristic declaration, the declaration's own handle.
    public var handle: UInt16
    /// The attribute value as the server sent it, possibly cut to fit the ATT MTU.
    public var value: [UInt8]

    /// Builds one entry from a handle and its value.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One Read By Group Type Response entry: a group (e.g. a service) and its value (e.g. its UUID).
public struct ATTGroupValue: Hashable, Sendable {
    /// The group's first handle (e.g. the service declaration).
    public var handle: UInt16
    /// The group's last handle; discovery continues after it.
    public var endGroup: UInt16
    /// The group's value, e.g. the 2- or 16-byte service UUID, little-endian.
    public var value: [UInt8]

    /// Builds one entry from the group's handles and its value.
    public init(handle: UInt16, endGroup: UInt16, value: [UInt8]) {
        self.handle = handle
        self.endGroup = endGroup
        self.value = value
    }
}
