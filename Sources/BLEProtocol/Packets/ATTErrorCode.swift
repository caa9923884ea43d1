import HAL

/// Names for ATT error codes (Vol 3 Part F §3.4.1.1, Supplement Part B for the common profile codes).
public enum ATTErrorCode {
    /// The request named a handle the server does not have (or handle 0).
    public static let invalidHandle: UInt8 = 0x01
    /// The attribute exists but may not be read.
    public static let readNotPermitted: UInt8 = 0x02
    /// The attribute exists but may not be written; our simulated peripherals send it for writes to read-only values.
    public static let writeNotPermitted: UInt8 = 0x03
    /// The request was malformed: a server's answer to a PDU it cannot parse.
    public static let invalidPDU: UInt8 = 0x04
    /// The link is not authenticated enough for this attribute (pair with MITM protection first).
    public static let insufficientAuthentication: UInt8 = 0x05
    /// The server does not implement this request.
    public static let requestNotSupported: UInt8 = 0x06
    /// A read or prepared write started past the end of the value.
    public static let invalidOffset: UInt8 = 0x07
    /// The server's prepare queue has no room for another part of a long write.
    public static let prepareQueueFull: UInt8 = 0x09
    /// The link's encryption key is shorter than the attribute needs (pair again for a longer one).
    public static let insufficientEncryptionKeySize: UInt8 = 0x0C
    /// The value written is longer (or shorter) than the attribute takes.
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    /// The link must be encrypted before this attribute is read or written.
    public static let insufficientEncryption: UInt8 = 0x0F
    /// Nothing in the requested handle range: the normal end of a discovery procedure, not a failure.
    public static let attributeNotFound: UInt8 = 0x0A
    /// The server could not complete the request for a reason no other code covers.
    public static let unlikelyError: UInt8 = 0x0E

    /// The code's name, e.g. `Attribute Not Found`; application and reserved codes say which they are.
    public static func describe(_ code: UInt8) -> String {
        if let name = names[code] { return name }
        switch code {
        case 0x80...0x9F: return "Application Error 0x" + Hex.byte(code)
        case 0xE0...0xFF: return "Common Profile Error 0x" + Hex.byte(code)
        default: return "Reserved error 0x" + Hex.byte(code)
        }
    }

    private static let names: [UInt8: String] = [
        0x01: "Invalid Handle",
        0x02: "Read Not Permitted",
        0x03: "Write Not Permitted",
        0x04: "Invalid PDU",
        0x05: "Insufficient Authentication",
        0x06: "Request Not Supported",
        0x07: "Invalid Offset",
        0x08: "Insufficient Authorization",
        0x09: "Prepare Queue Full",
        0x0A: "Attribute Not Found",
        0x0B: "Attribute Not Long",
        0x0C: "Encryption Key Size Too Short",
        0x0D: "Invalid Attribute Value Length",
        0x0E: "Unlikely Error",
        0x0F: "Insufficient Encryption",
        0x10: "Unsupported Group Type",
        0x11: "Insufficient Resources",
        0x12: "Database Out Of Sync",
        0x13: "Value Not Allowed",
        0xFC: "Write Request Rejected",
        0xFD: "Client Characteristic Configuration Descriptor Improperly Configured",
        0xFE: "Procedure Already in Progress",
        0xFF: "Out of Range",
    ]
}
