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

    public static let ffe0Service = BluetoothUUID(0xFFE0)
    public static let ffe1Frames = BluetoothUUID(0xFFE1)
    public static let ffe2Indications = BluetoothUUID(0xFFE2)
    public static let ffe3Unit = BluetoothUUID(0xFFE3)
    public static let ffe4Time = BluetoothUUID(0xFFE4)
    public static let fff0Service = BluetoothUUID(0xFFF0)
    public static let fff1Frames = BluetoothUUID(0xFFF1)
    public static let fff2Commands = BluetoothUUID(0xFFF2)

    /// The unit the scale is asked to show.
    public var displayUnit: WeightUnit
    /// Now, as Unix seconds, for the time setting (injected so tests are repeatable).
    public var unixSeconds: @Sendable () -> Int64
    public private(set) var layout: Layout?
    public private(set) var protocolType: UInt8?
    public private(set) var hundredths = true
    public private(set) var unitSent = false
    public private(set) var ready = false
    /// Values that were not frames (wrong length or checksum, too short), for diagnostics.
    public private(set) var malformedFrames = 0

    public init(displayUnit: WeightUnit = .kilograms, unixSeconds: @escaping @Sendable () -> Int64) {
        self.displayUnit = displayUnit == .pounds ? .pounds : .kilograms
        self.unixSeconds = unixSeconds
    }


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

    public var awaiting: String {
        unitSent ? "the scale's 0x14 answer to the unit setting" : "the scale's 0x12 information frame"
    }

    /// Nothing to send first: the scale speaks first with its `0x12` frame (QNHandler.kt waits for
    /// it, as its fix for a race with the protocol type notes).
    public mutating func start() -> [VendorScaleAction] { [] }

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
