/// A weight as a scale reports it, already in kilograms (drivers convert pounds and jin).
public struct WeightReading: Hashable, Sendable {
    public var kilograms: Double
    /// The device's own stable flag; nil when the device has none (then two equal readings count).
    public var stable: Bool?
    /// The unit the device shows its user.
    public var displayUnit: WeightUnit
    /// Bioelectrical impedance in ohms, from scales that measure it.
    public var impedanceOhms: Double?
    /// True when the person has stepped off (Mi scales say so explicitly).
    public var loadRemoved: Bool
    /// Body composition fields when the scale measured them.
    public var bodyFatPercent: Double?

    public init(kilograms: Double, stable: Bool?, displayUnit: WeightUnit = .kilograms,
                impedanceOhms: Double? = nil, loadRemoved: Bool = false, bodyFatPercent: Double? = nil) {
        self.kilograms = kilograms
        self.stable = stable
        self.displayUnit = displayUnit
        self.impedanceOhms = impedanceOhms
        self.loadRemoved = loadRemoved
        self.bodyFatPercent = bodyFatPercent
    }
}

/// The unit a scale shows its user; readings are always carried in kilograms.
public enum WeightUnit: String, Hashable, Sendable { case kilograms = "kg", pounds = "lb", jin }

/// The turntable scale's state as the mirror relays it (`scale` characteristic).
public struct ScaleStatus: Hashable, Sendable {
    public var present: Bool
    public var occupied: Bool
    public var stable: Bool
    public var level: Bool
    public var kilograms: Double

    public init(present: Bool, occupied: Bool = false, stable: Bool = false, level: Bool = true, kilograms: Double = 0) {
        self.present = present
        self.occupied = occupied
        self.stable = stable
        self.level = level
        self.kilograms = kilograms
    }
}

/// The mirror's `scanState` machine states, numbered as on the air.
public enum MirrorScanState: UInt8, Hashable, Sendable, CaseIterable {
    case idle = 0, warmingUp, ready, scanning, stepOff, processing, complete, error
}

/// Why a mirror stopped a scan (`scanState` error codes).
public enum MirrorErrorCode: Hashable, Sendable {
    case userMoved, scaleNotLevel, sensorFault, steppedOffEarly, mirrorTimedOut, batteryLow
    case unknown(UInt8)

    public init(code: UInt8) {
        switch code {
        case 1: self = .userMoved
        case 2: self = .scaleNotLevel
        case 3: self = .sensorFault
        case 4: self = .steppedOffEarly
        case 5: self = .mirrorTimedOut
        case 6: self = .batteryLow
        default: self = .unknown(code)
        }
    }

    public var code: UInt8 {
        switch self {
        case .userMoved: 1
        case .scaleNotLevel: 2
        case .sensorFault: 3
        case .steppedOffEarly: 4
        case .mirrorTimedOut: 5
        case .batteryLow: 6
        case .unknown(let c): c
        }
    }

    public static let allKnown: [MirrorErrorCode] =
        [.userMoved, .scaleNotLevel, .sensorFault, .steppedOffEarly, .mirrorTimedOut, .batteryLow, .unknown(0xFF)]
}

public struct MirrorScanStatus: Hashable, Sendable {
    public var state: MirrorScanState
    /// 0–100, meaningful in `scanning` and `processing`.
    public var progress: UInt8
    /// Set only in `error`.
    public var error: MirrorErrorCode?

    public init(state: MirrorScanState, progress: UInt8 = 0, error: MirrorErrorCode? = nil) {
        self.state = state
        self.progress = progress
        self.error = error
    }
}

/// Where the turntable scale stands relative to the mirror.
public struct Alignment: Hashable, Sendable {
    /// Degrees; negative means turn the scale left.
    public var angleDegrees: Int8
    public var distanceCm: UInt8
    public var aligned: Bool

    public init(angleDegrees: Int8, distanceCm: UInt8, aligned: Bool) {
        self.angleDegrees = angleDegrees
        self.distanceCm = distanceCm
        self.aligned = aligned
    }

    /// The profile's rule for the aligned flag: |angle| ≤ 3 and 40 ≤ distance ≤ 60.
    public static func isAligned(angleDegrees: Int8, distanceCm: UInt8) -> Bool {
        abs(Int(angleDegrees)) <= 3 && (40...60).contains(distanceCm)
    }
}

/// `deviceInfo`: read once at preflight.
public struct MirrorInfo: Hashable, Sendable {
    public var protocolVersion: UInt8
    public var firmwareMajor: UInt8
    public var firmwareMinor: UInt8
    public var firmwarePatch: UInt8
    /// Percent, or nil when the mirror runs on mains (0xFF on the air).
    public var batteryPercent: UInt8?

    public init(protocolVersion: UInt8, firmwareMajor: UInt8, firmwareMinor: UInt8, firmwarePatch: UInt8,
                batteryPercent: UInt8?) {
        self.protocolVersion = protocolVersion
        self.firmwareMajor = firmwareMajor
        self.firmwareMinor = firmwareMinor
        self.firmwarePatch = firmwarePatch
        self.batteryPercent = batteryPercent
    }
}

/// `result`: readable once the mirror reaches `complete`.
public struct ScanResult: Hashable, Sendable {
    public var scanID: UInt32
    public var kilograms: Double
    public var bodyFatPercent: Double
    public var pointCount: UInt32

    public init(scanID: UInt32, kilograms: Double, bodyFatPercent: Double, pointCount: UInt32) {
        self.scanID = scanID
        self.kilograms = kilograms
        self.bodyFatPercent = bodyFatPercent
        self.pointCount = pointCount
    }
}

public enum MeasurementSystem: UInt8, Hashable, Sendable { case metric = 0, imperial = 1 }

/// What a client can ask a mirror to do (`init`, `scanToken`, `control`).
public enum MirrorCommand: Hashable, Sendable {
    case initialize(heightMillimetres: UInt16, units: MeasurementSystem)
    case scanToken([UInt8])
    case confirmAlignment
    case startScan
    case abort
    case reset

    public var name: String {
        switch self {
        case .initialize: "init"
        case .scanToken: "scanToken"
        case .confirmAlignment: "confirmAlignment"
        case .startScan: "startScan"
        case .abort: "abort"
        case .reset: "reset"
        }
    }
}

/// Why a link ended, in words a person can act on.
public enum DisconnectReason: Hashable, Sendable, CustomStringConvertible {
    case remoteUserTerminated
    case supervisionTimeout
    case localHostTerminated
    case transportLost(String)
    /// Any other reason, by its HCI code (Transports maps the codes: HAL does not speak HCI).
    case hciError(UInt8)

    public var description: String {
        switch self {
        case .remoteUserTerminated: "the device ended the connection"
        case .supervisionTimeout: "the device went out of range or lost power (supervision timeout)"
        case .localHostTerminated: "we ended the connection"
        case .transportLost(let why): "the Bluetooth controller went away: \(why)"
        case .hciError(let code): "the link dropped (HCI reason 0x\(Hex.byte(code)))"
        }
    }
}

/// Everything a scale or mirror connection reports, in the order it happened.
public enum ScaleEvent: Hashable, Sendable {
    case weight(WeightReading)
    case scale(ScaleStatus)
    case scanState(MirrorScanStatus)
    case alignment(Alignment)
    case disconnected(DisconnectReason)
}
