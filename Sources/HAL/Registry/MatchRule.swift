/// What a driver recognises, as data, so `hwprobe` can say which driver claimed a device and why.
public enum MatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The advertisement lists this service UUID.
    case serviceUUID(BluetoothUUID)
    /// The advertisement carries service data for this UUID (broadcast scales).
    case serviceData(BluetoothUUID)
    /// Service data for this UUID with these bytes at this offset: for a service many products
    /// share, whose data names the product (Xiaomi's MiBeacon 0xFE95 carries a product id at 2–3).
    case serviceDataBytes(BluetoothUUID, offset: Int, bytes: [UInt8])
    /// Manufacturer data from this company, optionally starting with these bytes.
    case manufacturer(companyID: UInt16, prefix: [UInt8])
    /// The local name starts with this text.
    case namePrefix(String)
    /// The local name contains this text, ignoring case: for model codes that brands put
    /// anywhere in a name ("eufy T9146", "T9146 Smart Scale").
    case nameContains(String)
    /// A USB device with this vendor and product ID.
    case usb(vendor: UInt16, product: UInt16)
    /// A hidraw node whose device has this vendor and product ID.
    case hidraw(vendor: UInt16, product: UInt16)
    /// An evdev node with this capability.
    case evdev(EvdevCapability)
    /// Every one of these rules at once: for vendor services that several unrelated protocol
    /// families share (FFE0, FFF0, FFB0 …), where only the service together with the model's
    /// name says which family a device speaks.
    indirect case allOf([MatchRule])

    /// Force-feedback features an evdev node can report, as the kernel names them.
    public enum EvdevCapability: String, Hashable, Sendable {
        /// Force-feedback rumble (FF_RUMBLE), what the pad drivers need.
        case rumble = "FF_RUMBLE"
    }

    /// How much a match by this rule says about the device. A more specific rule wins over a
    /// generic one: vendor bytes over service data over a listed service over a name.
    public var specificity: Int {
        switch self {
        case .manufacturer(_, let prefix): 400 + prefix.count
        case .usb, .hidraw: 400
        case .serviceData: 300
        case .serviceDataBytes(_, _, let bytes): 300 + bytes.count
        case .serviceUUID(let uuid): uuid.shortValue == nil ? 250 : 200
        case .namePrefix(let prefix): 100 + prefix.count
        case .nameContains(let text): 90 + text.count
        case .evdev: 50
        // Both facts together say more than either alone: a vendor service plus a model name
        // outranks a bare standard service, so a rebrand that also lists 181D is still read
        // through the protocol its name promises.
        case .allOf(let rules): rules.reduce(0) { $0 + $1.specificity }
        }
    }

    /// The rule in words, as `list` and claim reasons quote it (`manufacturer 0157`, `USB 045e:028e`).
    public var description: String {
        switch self {
        case .serviceUUID(let uuid): "service \(uuid)"
        case .serviceData(let uuid): "service data \(uuid)"
        case .serviceDataBytes(let uuid, let offset, let bytes):
            "service data \(uuid) with \(Hex.string(bytes, separator: " ")) at byte \(offset)"
        case .manufacturer(let company, let prefix):
            "manufacturer \(Hex.word(company))" + (prefix.isEmpty ? "" : " data " + Hex.string(prefix, separator: " "))
        case .namePrefix(let prefix): "name \"\(prefix)…\""
        case .nameContains(let text): "name containing \"\(text)\""
        case .usb(let v, let p): "USB \(Hex.word(v, .lower)):\(Hex.word(p, .lower))"
        case .hidraw(let v, let p): "hidraw \(Hex.word(v, .lower)):\(Hex.word(p, .lower))"
        case .evdev(let cap): "evdev \(cap.rawValue)"
        case .allOf(let rules): rules.map(\.description).joined(separator: " and ")
        }
    }
}

