/// Something a driver might claim, described the way the registry's rules look at it.
public enum DeviceSubject: Hashable, Sendable {
    /// A BLE device seen while scanning, matched by its services, data and name.
    case advertisement(Advertisement)
    /// An attached USB device, matched by vendor and product ID.
    case usb(USBIdentity)
    /// A hidraw node, matched by the USB IDs of the device behind it.
    case hidraw(path: String, identity: USBIdentity)
    /// An input event node, matched by the force-feedback effects it supports.
    case evdev(path: String, capabilities: Set<MatchRule.EvdevCapability>)
}

/// A USB device's vendor and product ID, which is what driver rules and device URIs name it by.
public struct USBIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The vendor ID (`idVendor`), e.g. 0x045E.
    public var vendor: UInt16
    /// The product ID (`idProduct`), e.g. 0x028E.
    public var product: UInt16

    /// Builds an identity from the two IDs.
    public init(vendor: UInt16, product: UInt16) {
        self.vendor = vendor
        self.product = product
    }

    /// `045e:028e`: USB IDs are lower-case hex in the contract.
    public var description: String { "\(Hex.word(vendor, .lower)):\(Hex.word(product, .lower))" }
}

extension MatchRule {
    /// Whether this rule, on its own, matches the subject.
    public func matches(_ subject: DeviceSubject) -> Bool {
        switch (self, subject) {
        case (.serviceUUID(let uuid), .advertisement(let ad)):
            return ad.serviceUUIDs.contains(uuid)
        case (.serviceData(let uuid), .advertisement(let ad)):
            return ad.serviceData[uuid] != nil
        case (.serviceDataBytes(let uuid, let offset, let bytes), .advertisement(let ad)):
            guard let data = ad.serviceData[uuid], offset >= 0, data.count >= offset + bytes.count else { return false }
            return data[offset..<(offset + bytes.count)].elementsEqual(bytes)
        case (.manufacturer(let company, let prefix), .advertisement(let ad)):
            guard let data = ad.manufacturerData[company] else { return false }
            return data.starts(with: prefix)
        case (.namePrefix(let prefix), .advertisement(let ad)):
            return ad.localName?.hasPrefix(prefix) ?? false
        case (.nameContains(let text), .advertisement(let ad)):
            return !text.isEmpty && (ad.localName?.lowercased().contains(text.lowercased()) ?? false)
        case (.usb(let v, let p), .usb(let id)):
            return id.vendor == v && id.product == p
        case (.hidraw(let v, let p), .hidraw(_, let id)):
            return id.vendor == v && id.product == p
        case (.evdev(let cap), .evdev(_, let caps)):
            return caps.contains(cap)
        case (.allOf(let rules), _):
            return !rules.isEmpty && rules.allSatisfy { $0.matches(subject) }
        default:
            return false
        }
    }
}
