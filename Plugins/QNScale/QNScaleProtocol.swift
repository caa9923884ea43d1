import HAL
import Transports

/// The QN / Yolanda conversation as a value: choose the layout, answer the `0x12` frame with the
/// unit setting and the `0x14` frame with the time, and turn `0x10` frames into readings.
/// Sources: see `QNFrame`.
public struct QNScaleProtocol: VendorScaleProtocol {
    /// Which of the two GATT layouts the scale has (QNHandler.kt "type 1" and "type 2").
    public enum Layout: Hashable, Sendable {
        /// FFE0: FFE1 notify (frames), FFE2 indicate, FFE3 write (unit), FFE4 write (time).
        case ffe0
        /// FFF0: FFF1 notify (frames), FFF2 write (unit and time).
        case fff0
    }

    /// Layout 1's service; claims a device only with a QN-family name (see `QNScaleDriver`).
    public static let ffe0Service = BluetoothUUID(0xFFE0)
    /// Layout 1: the scale notifies its frames here.
    public static let ffe1Frames = BluetoothUUID(0xFFE1)
    /// Layout 1: an indicate characteristic, subscribed to when present though no frames are read from it.
    public static let ffe2Indications = BluetoothUUID(0xFFE2)
    /// Layout 1: the unit setting (0x13) is written here.
    public static let ffe3Unit = BluetoothUUID(0xFFE3)
    /// Layout 1: the time setting (0x20) is written here.
    public static let ffe4Time = BluetoothUUID(0xFFE4)
    /// Layout 2's service; claims a device only with a QN-family name (see `QNScaleDriver`).
    public static let fff0Service = BluetoothUUID(0xFFF0)
    /// Layout 2: the scale notifies its frames here.
    public static let fff1Frames = BluetoothUUID(0xFFF1)
    /// Layout 2: both the unit and the time settings are written here.
    public static let fff2Commands = BluetoothUUID(0xFFF2)

    /// The unit the scale is asked to show.
    public var displayUnit: WeightUnit
    /// Now, as Unix seconds, for the time setting (injected so tests are repeatable).
    public var unixSeconds: @Sendable () -> Int64
    /// The layout found by `subscriptions(available:)`; nil before it runs.
    public private(set) var layout: Layout?
    /// The protocol type of the first `0x12` frame, echoed in the settings we send.
    public private(set) var protocolType: UInt8?
    /// Whether raw weights are hundredths (true, the default) or tenths, as the latest `0x12` frame said.
    public private(set) var hundredths = true
    /// The unit setting has been written; later `0x12` frames are not answered again.
    public private(set) var unitSent = false
    /// The opening exchange is over and `.ready` has been sent.
    public private(set) var ready = false
    /// Values that were not frames (wrong length or checksum, too short), for diagnostics.
    public private(set) var malformedFrames = 0

    /// Stones are sent as pounds; `unixSeconds` supplies the time written after the `0x14` frame.
    public init(displayUnit: WeightUnit = .kilograms, unixSeconds: @escaping @Sendable () -> Int64) {
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.unixSeconds = unixSeconds
    }


    /// Picks FFE0 (needs FFE1 and FFE3) before FFF0 (needs FFF1 and FFF2) and returns the frame characteristics.
    public mutating func subscriptions(available: Set<BluetoothUUID>) throws(ScaleError) -> [BluetoothUUID] {
        if available.contains(Self.ffe1Frames), available.contains(Self.ffe3Unit) {
            layout = .ffe0
            return [Self.ffe1Frames] + (available.contains(Self.ffe2Indications) ? [Self.ffe2Indications] : [])
        }
        if available.contains(Self.fff1Frames), available.contains(Self.fff2Commands) {
            layout = .fff0
            return [Self.fff1Frames]
        }
        throw .unsupported("the QN frame and command characteristics (FFE1 + FFE3, or FFF1 + FFF2)")
    }

    /// What the handshake waits for, named in the timeout error: the `0x12` frame, then the `0x14` answer.
    public var awaiting: String {
        unitSent ? "the scale's 0x14 answer to the unit setting" : "the scale's 0x12 information frame"
    }

    /// Nothing to send first: the scale speaks first with its `0x12` frame (QNHandler.kt waits for
    /// it, as its fix for a race with the protocol type notes).
    public mutating func start() -> [VendorScaleAction] { [] }

    /// Answers `0x12` with the unit setting and `0x14` with the time; `0x10` frames with a non-zero weight
    /// become readings. Values on other characteristics or that fail to parse are ignored.
    public mutating func received(_ value: [UInt8], from characteristic: BluetoothUUID) -> [VendorScaleAction] {
        guard characteristic == Self.ffe1Frames || characteristic == Self.fff1Frames else { return [] }
        let frame: QNFrame
        do { frame = try QNFrame(parsing: value) } catch {
            malformedFrames += 1
            return []
        }
        switch frame {
        case .information(let type, let hundredths):
            self.hundredths = hundredths
            guard !unitSent else { return [] }
            protocolType = type
            unitSent = true
            return [.write(layout == .fff0 ? Self.fff2Commands : Self.ffe3Unit,
                           QNFrame.unitSetting(protocolType: type, unit: displayUnit), withResponse: true,
                           purpose: "the unit setting (0x13)")]
        case .unitAcknowledged(let type):
            let time = QNFrame.timeSetting(protocolType: protocolType ?? type, unixSeconds: unixSeconds())
            var actions: [VendorScaleAction] = [.write(layout == .fff0 ? Self.fff2Commands : Self.ffe4Time, time,
                                                       withResponse: true, purpose: "the time setting (0x20)")]
            if !ready {
                ready = true
                actions.append(.ready)
            }
            return actions
        case .weight(_, let raw, let stable, _, _):
            var actions: [VendorScaleAction] = []
            // A scale that weighs without asking for the time has finished its opening too.
            if !ready, unitSent {
                ready = true
                actions.append(.ready)
            }
            guard raw > 0 else { return actions }
            actions.append(.reading(WeightReading(kilograms: kilograms(raw), stable: stable, displayUnit: displayUnit)))
            return actions
        case .other:
            return []
        }
    }

    /// The weight in kilograms: hundredths or tenths as the `0x12` frame said, and on the FFF0
    /// layout with tenths a further tenth (QNHandler.kt, after its PR #1152).
    public func kilograms(_ raw: UInt16) -> Double {
        var kg = Double(raw) / (hundredths ? 100 : 10)
        if layout == .fff0 && !hundredths { kg /= 10 }
        return kg
    }
}
