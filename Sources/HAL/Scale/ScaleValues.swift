/// A weight as a scale reports it, already in kilograms (drivers convert pounds and jin).
public struct WeightReading: Hashable, Sendable {
    /// The weight in kilograms after the driver's unit conversion, whatever unit the scale displays.
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
    /// Beats per minute, from scales that measure the pulse through the feet (Xiaomi's S400).
    public var heartRateBpm: Int?

    /// Builds a reading; by default a plain kilogram weight with no impedance, body fat, pulse or step-off.
    public init(kilograms: Double, stable: Bool?, displayUnit: WeightUnit = .kilograms,
                impedanceOhms: Double? = nil, loadRemoved: Bool = false, bodyFatPercent: Double? = nil, heartRateBpm: Int? = nil) {
        self.kilograms = kilograms
        self.stable = stable
        self.displayUnit = displayUnit
        self.impedanceOhms = impedanceOhms
        self.loadRemoved = loadRemoved
        self.bodyFatPercent = bodyFatPercent
        self.heartRateBpm = heartRateBpm
    }
}

/// The unit a scale shows its user; readings are always carried in kilograms.
public enum WeightUnit: String, Hashable, Sendable {
    /// Kilograms: every reading is held in them, whatever the scale shows.
    case kilograms = "kg"
    /// Pounds, shown on scales set to imperial.
    case pounds = "lb"
    /// Jin (0.5 kg), shown by some scales sold in China.
    case jin
}

/// The turntable scale's state as the mirror relays it (`scale` characteristic).
public struct ScaleStatus: Hashable, Sendable {
    /// True when the mirror sees a turntable scale at all; the other fields mean little without it.
    public var present: Bool
    /// True while someone stands on the scale; flows watch it fall to false to know they stepped off.
    public var occupied: Bool
    /// True once the weight has settled, as the mirror judges it.
    public var stable: Bool
    /// False when the scale is tilted; a scan started on an unlevel scale fails with `scaleNotLevel`.
    public var level: Bool
    /// The weight on the scale in kilograms (0.005 kg steps on the air); 0 when nobody is on it.
    public var kilograms: Double

    /// Builds a status; by default a present, empty, level scale reading zero.
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
    /// Waiting for `init` and a scan token; a person may stand on the scale and see their weight.
    case idle = 0
    /// The scan token was accepted and the sensors are warming up; `startScan` is refused until `ready`.
    case warmingUp
    /// Warmed up and waiting for `startScan`.
    case ready
    /// Capturing; `progress` climbs to 100 and the person must stand still and stay on the scale.
    case scanning
    /// Capture is done and the mirror waits for the person to step off before it processes.
    case stepOff
    /// Building the model after the step-off; `progress` climbs to 100 again.
    case processing
    /// The scan finished and `result` can be read.
    case complete
    /// The scan stopped; the status carries the `MirrorErrorCode` saying why.
    case error
}

/// Why a mirror stopped a scan (`scanState` error codes).
public enum MirrorErrorCode: Hashable, Sendable {
    /// The person moved during capture (code 1); they should stand still and try again.
    case userMoved
    /// The scale is tilted (code 2); it needs a flat, hard floor.
    case scaleNotLevel
    /// A mirror sensor reported a fault (code 3); restart the mirror.
    case sensorFault
    /// The person left the scale during capture, before the mirror asked (code 4).
    case steppedOffEarly
    /// The mirror gave up waiting for the next step (code 5).
    case mirrorTimedOut
    /// The battery is too low to scan (code 6); the mirror needs mains power.
    case batteryLow
    /// A code the profile does not name, kept so it can be reported by number.
    case unknown(UInt8)

    /// Decodes an error byte from `scanState`; codes the profile does not name become `.unknown`.
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

    /// The byte this reason travels as in `scanState`, the inverse of `init(code:)`.
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

    /// One of every reason, plus an unnamed code, so tests and simulations can try them all.
    public static let allKnown: [MirrorErrorCode] =
        [.userMoved, .scaleNotLevel, .sensorFault, .steppedOffEarly, .mirrorTimedOut, .batteryLow, .unknown(0xFF)]
}

/// One `scanState` notification: where the mirror's scan has got to, and why it failed if it did.
public struct MirrorScanStatus: Hashable, Sendable {
    /// The step of the scan machine the mirror is in.
    public var state: MirrorScanState
    /// 0–100, meaningful in `scanning` and `processing`.
    public var progress: UInt8
    /// Set only in `error`.
    public var error: MirrorErrorCode?

    /// Builds a status; progress and error default to their "not applicable" values.
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
    /// Centimetres from the mirror; the aligned rule wants 40 to 60.
    public var distanceCm: UInt8
    /// The mirror's own verdict, which the profile says follows `isAligned(angleDegrees:distanceCm:)`.
    public var aligned: Bool

    /// Builds an alignment as reported; it does not recompute `aligned` from the angle and distance.
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
    /// The mirror profile version the firmware speaks; the body-scan flow stops at preflight unless it is 1.
    public var protocolVersion: UInt8
    /// Firmware major version, so a bench run can be tied to the build it ran against.
    public var firmwareMajor: UInt8
    /// Firmware minor version.
    public var firmwareMinor: UInt8
    /// Firmware patch version.
    public var firmwarePatch: UInt8
    /// Percent, or nil when the mirror runs on mains (0xFF on the air).
    public var batteryPercent: UInt8?

    /// Builds the info as read from `deviceInfo`.
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
    /// The mirror's identifier for this scan, for matching the result to its logs.
    public var scanID: UInt32
    /// The weight measured during the scan, in kilograms.
    public var kilograms: Double
    /// Body fat from the scan as a percentage (sent in 0.1 % steps).
    public var bodyFatPercent: Double
    /// How many points the scan captured, shown to the person when the scan completes.
    public var pointCount: UInt32

    /// Builds a result as read from the `result` characteristic.
    public init(scanID: UInt32, kilograms: Double, bodyFatPercent: Double, pointCount: UInt32) {
        self.scanID = scanID
        self.kilograms = kilograms
        self.bodyFatPercent = bodyFatPercent
        self.pointCount = pointCount
    }
}

/// The units the mirror should show its user, sent in the `init` command.
public enum MeasurementSystem: UInt8, Hashable, Sendable {
    /// Kilograms and centimetres on the mirror's display.
    case metric = 0
    /// Pounds and inches on the mirror's display.
    case imperial = 1
}

/// What a client can ask a mirror to do (`init`, `scanToken`, `control`).
public enum MirrorCommand: Hashable, Sendable {
    /// Tells the mirror the person's height and which units to show; required before a scan token.
    case initialize(heightMillimetres: UInt16, units: MeasurementSystem)
    /// The 16-byte token that authorises one scan and starts the warm-up.
    case scanToken([UInt8])
    /// Says the person has lined the scale up; refused while the mirror reports it not aligned.
    case confirmAlignment
    /// Starts capture; refused unless the mirror is `ready`.
    case startScan
    /// Stops the scan in progress and returns the mirror to `idle`, forgetting `init`.
    case abort
    /// Returns the mirror to `idle` and forgets `init`, whatever state it was in.
    case reset

    /// The command's name as the mirror profile spells it, used in logs and refusal messages.
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
    /// The device chose to end the link.
    case remoteUserTerminated
    /// No packets arrived for the supervision timeout: out of range or out of power.
    case supervisionTimeout
    /// We ended the link, on purpose or because the session was closed.
    case localHostTerminated
    /// The controller or its transport failed; the text says how.
    case transportLost(String)
    /// Any other reason, by its HCI code (Transports maps the codes: HAL does not speak HCI).
    case hciError(UInt8)

    /// The words a person reads in messages and reports.
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
    /// A weight from a plain scale, or the mirror's live weight.
    case weight(WeightReading)
    /// The turntable scale's presence, occupancy, level and weight as the mirror relays them.
    case scale(ScaleStatus)
    /// A step or progress change of the mirror's scan, with the error when it failed.
    case scanState(MirrorScanStatus)
    /// Where the turntable stands relative to the mirror, for guiding the person to line it up.
    case alignment(Alignment)
    /// A broadcasting scale's advertisement that carries a reading no one here can read: its
    /// key is missing or wrong. The scale goes on broadcasting; what to do is the consumer's call.
    case unreadable(BroadcastReadingError)
    /// The link ended; nothing else follows on this connection.
    case disconnected(DisconnectReason)
}
