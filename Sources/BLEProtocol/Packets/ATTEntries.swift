import HAL

/// A range of attribute handles, as Find By Type Value Response lists them (found handle, group end).
public struct ATTHandleRange: Hashable, Sendable {
    public var start: UInt16
    public var end: UInt16

    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }
}

/// One Find Information Response entry: an attribute's handle and type.
public struct ATTHandleUUID: Hashable, Sendable {
    public var handle: UInt16
    public var uuid: BluetoothUUID

    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// One Read By Type Response entry. All entries of one response have values of the same length.
public struct ATTHandleValue: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One Read By Group Type Response entry: a group (e.g. a service) and its value (e.g. its UUID).
public struct ATTGroupValue: Hashable, Sendable {
    public var handle: UInt16
    public var endGroup: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, endGroup: UInt16, value: [UInt8]) {
        self.handle = handle
        self.endGroup = endGroup
        self.value = value
    }
}
