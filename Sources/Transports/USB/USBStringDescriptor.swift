/// Why a string descriptor a USB device sent could not be read.
public enum USBDescriptorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device's bytes are not a valid string descriptor; the text says what was wrong.
    case malformed(String)

    /// The words a person reads in messages and logs.
    public var description: String {
        switch self {
        case .malformed(let what): "malformed USB string descriptor: \(what)"
        }
    }
}

/// String descriptors as a device sends them (USB 2.0 §9.6.7): bLength, bDescriptorType 3, then
/// UTF-16LE code units; descriptor 0 lists the language IDs instead. The device decides every
/// byte, so lengths are checked against what actually arrived.
public enum USBStringDescriptor {
    /// bDescriptorType of a string descriptor; a descriptor with another type is refused.
    public static let descriptorType: UInt8 = 0x03

    /// The language IDs of string descriptor 0, in the device's order.
    public static func languages(_ bytes: [UInt8]) throws(USBDescriptorError) -> [UInt16] {
        try codeUnits(bytes)
    }

    /// The text of a string descriptor; code units that are not valid UTF-16 are repaired, and
    /// trailing NULs (some devices pad with them) are dropped.
    public static func text(_ bytes: [UInt8]) throws(USBDescriptorError) -> String {
        var units = try codeUnits(bytes)
        while units.last == 0 { units.removeLast() }
        return String(decoding: units, as: UTF16.self)
    }

    private static func codeUnits(_ bytes: [UInt8]) throws(USBDescriptorError) -> [UInt16] {
        guard bytes.count >= 2 else { throw .malformed("\(bytes.count) bytes, shorter than its header") }
        let length = Int(bytes[0])
        guard bytes[1] == descriptorType else { throw .malformed("type \(bytes[1]), not a string (3)") }
        guard length >= 2, length <= bytes.count else {
            throw .malformed("bLength \(length) with \(bytes.count) bytes received")
        }
        // An odd bLength leaves half a code unit at the end: it is ignored.
        return stride(from: 2, to: length - 1, by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
    }
}
