import HAL

/// One frame of the QN / Yolanda vendor protocol (Renpho, FITINDEX, Sencor, Elis, Arboleaf …),
/// as the scale notifies it on FFE1 (layout 1) or FFF1 (layout 2).
///
/// Facts, from oliexdev/openScale (`android_app/app/src/main/java/com/health/openscale/core/
/// bluetooth/scales/QNHandler.kt`, and the older `…/core/bluetooth/BluetoothQNScale.java` with
/// the byte captures in its comments):
/// - Every frame is `opcode, length, protocol type, …, checksum`: `length` counts the whole frame
///   and the checksum is the low byte of the sum of all bytes before it. The captures in
///   BluetoothQNScale.java bear this out (`21 05 15 01 3C`, `13 09 15 01 10 00 00 00 42`,
///   `20 08 15 68 DF 40 23 E7`), so frames that fail either check are refused here.
/// - `0x12` (information): byte 10 is 1 when weights are in hundredths, otherwise tenths.
/// - `0x14`: the scale took the unit setting and now wants the time.
/// - `0x10` (weight, the original layout both sources read): bytes 3–4 the weight, big-endian,
///   in the unit of the `0x12` frame; byte 5 is 1 once the weight is stable (0 while settling);
///   bytes 6–7 and 8–9 two resistance values, big-endian.
///
/// Where the sources differ: QNHandler.kt also knows an ES-30M layout of `0x10` (unit at 3,
/// stable at 4, weight at 5–6) that it tells apart only by guessing from byte 4 and the factor;
/// that guess is not repeated here, so the ES-30M is not read. QNHandler.kt divides layout-2
/// weights by a further 10 when the factor is tenths (its PR #1152) and retries any weight
/// outside 5–250 kg divided by 10; the first is kept (`QNScaleProtocol`), the second is not (a
/// guess that would turn a real 3 kg parcel into 0.3 kg).
public enum QNFrame: Hashable, Sendable {
    /// `0x12`: the scale's information frame; `hundredths` is byte 10 == 1, and the protocol type is echoed back.
    case information(protocolType: UInt8, hundredths: Bool)
    /// `0x10`: a weight (bytes 3–4, big-endian, in the `0x12` frame's unit), stable flag and two resistances.
    case weight(protocolType: UInt8, raw: UInt16, stable: Bool, resistance1: UInt16, resistance2: UInt16)
    /// `0x14`: the scale took the unit setting and wants the time next.
    case unitAcknowledged(protocolType: UInt8)
    /// A well-formed frame this driver has no use for (stored records 0x23, acknowledgements).
    case other(opcode: UInt8)

    /// Opcode of the information frame, answered with `unitSetting`.
    public static let informationOpcode: UInt8 = 0x12
    /// Opcode of the weight frame.
    public static let weightOpcode: UInt8 = 0x10
    /// Opcode the scale uses to acknowledge the unit setting, answered with `timeSetting`.
    public static let unitAcknowledgedOpcode: UInt8 = 0x14

    /// Checks length byte and checksum before decoding; throws `QNParseError` for anything not a whole frame.
    public init(parsing bytes: [UInt8]) throws(QNParseError) {
        guard bytes.count >= 4 else { throw .tooShort(bytes.count) }
        guard Int(bytes[1]) == bytes.count else { throw .lengthMismatch(declared: Int(bytes[1]), actual: bytes.count) }
        let expected = QNFrame.checksum(bytes.dropLast())
        guard let last = bytes.last, last == expected else { throw .checksum(expected: expected, found: bytes.last ?? 0) }
        let protocolType = bytes[2]
        switch bytes[0] {
        case Self.informationOpcode:
            guard bytes.count > 10 else { throw .tooShortFor(opcode: bytes[0], count: bytes.count, needed: 11) }
            self = .information(protocolType: protocolType, hundredths: bytes[10] == 1)
        case Self.weightOpcode:
            guard bytes.count >= 10 else { throw .tooShortFor(opcode: bytes[0], count: bytes.count, needed: 10) }
            self = .weight(protocolType: protocolType, raw: UInt16(bytes[3]) << 8 | UInt16(bytes[4]), stable: bytes[5] == 1,
                           resistance1: UInt16(bytes[6]) << 8 | UInt16(bytes[7]),
                           resistance2: UInt16(bytes[8]) << 8 | UInt16(bytes[9]))
        case Self.unitAcknowledgedOpcode:
            self = .unitAcknowledged(protocolType: protocolType)
        default:
            self = .other(opcode: bytes[0])
        }
    }

    /// The low byte of the sum of `bytes`: the last byte of every frame, both ways.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0) { $0 &+ $1 }
    }

    /// `13 09 <protocol type> <unit> 10 00 00 00 <checksum>`: the unit setting, sent after the
    /// `0x12` frame with that frame's protocol type echoed (QNHandler.kt; BluetoothQNScale.java
    /// sent it unprompted with protocol type 0x15). Unit 1 is kilograms, 2 pounds (the vendor
    /// apps send stones as pounds).
    public static func unitSetting(protocolType: UInt8, unit: WeightUnit) -> [UInt8] {
        let code: UInt8 = unit == .pounds ? 0x02 : 0x01
        let body: [UInt8] = [0x13, 0x09, protocolType, code, 0x10, 0x00, 0x00, 0x00]
        return body + [checksum(body)]
    }

    /// Seconds since 2000-01-01 00:00:00 UTC as a Unix time offset. openScale's constant
    /// (`SCALE_UNIX_TIMESTAMP_OFFSET = 946_702_800`) is five hours later than the midnight its own
    /// comment names (946_684_800); we follow the comment, since the scale only stamps its
    /// stored records with it.
    public static let epochOffset: Int64 = 946_684_800

    /// `20 08 <protocol type> <u32 LE seconds since 2000> <checksum>`: the time, the answer to a
    /// `0x14` frame (QNHandler.kt; the capture `20 08 15 68 DF 40 23 E7` in BluetoothQNScale.java
    /// shows the app writing it to FFE4 after a 0x14).
    public static func timeSetting(protocolType: UInt8, unixSeconds: Int64) -> [UInt8] {
        let seconds = UInt32(clamping: max(0, unixSeconds - epochOffset))
        let body: [UInt8] = [0x20, 0x08, protocolType, UInt8(seconds & 0xFF), UInt8(seconds >> 8 & 0xFF),
                             UInt8(seconds >> 16 & 0xFF), UInt8(seconds >> 24)]
        return body + [checksum(body)]
    }
}

/// Why bytes from a QN scale are not a frame; such values are skipped and counted.
public enum QNParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than 4 bytes: not even opcode, length, protocol type and checksum.
    case tooShort(Int)
    /// Byte 1 (the frame's own length) disagrees with the bytes received.
    case lengthMismatch(declared: Int, actual: Int)
    /// The last byte is not the low byte of the sum of the others.
    case checksum(expected: UInt8, found: UInt8)
    /// A known opcode whose frame is too short for the fields it must carry.
    case tooShortFor(opcode: UInt8, count: Int, needed: Int)

    /// One line for logs, naming what was wrong with the bytes.
    public var description: String {
        switch self {
        case .tooShort(let count): "a QN frame has at least 4 bytes, this one \(count)"
        case .lengthMismatch(let declared, let actual): "the frame says it has \(declared) bytes but has \(actual)"
        case .checksum(let expected, let found): "checksum 0x\(String(found, radix: 16)) where 0x\(String(expected, radix: 16)) was due"
        case .tooShortFor(let opcode, let count, let needed):
            "a 0x\(String(opcode, radix: 16)) frame needs \(needed) bytes, this one has \(count)"
        }
    }
}
