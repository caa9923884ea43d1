/// The kind of device a driver yields, as the contract's `kind` names it.
public enum DeviceKind: String, Hashable, Sendable {
    /// A bathroom scale: weights, perhaps body composition.
    case scale
    /// The body-scan mirror (docs/mirror-gatt-v1.md): a scale plus a scan.
    case mirror
    /// A rumble or LED pad the cues play on.
    case hapticPad
}

/// A driver's identity card: who it is and what it claims. Pure data.
public struct DriverDescriptor: Hashable, Sendable {
    /// Stable identifier shown as `driver` in `hwprobe list` (e.g. `mi-scale`).
    public var id: String
    /// The driver's name in words, for people reading a report.
    public var name: String
    /// What sort of device the driver yields.
    public var kind: DeviceKind
    /// A driver claims a device when any one of its rules matches.
    public var rules: [MatchRule]

    /// Builds a descriptor; a driver normally keeps one as a static constant.
    public init(id: String, name: String, kind: DeviceKind, rules: [MatchRule]) {
        self.id = id
        self.name = name
        self.kind = kind
        self.rules = rules
    }
}

/// Every plugin's entry point. Family protocols (scale drivers, pad drivers) refine it with the
/// factories that turn a claimed device into a HAL object.
public protocol Driver: Sendable {
    /// Who the driver is and which devices it claims; read by the registry before any device is opened.
    var descriptor: DriverDescriptor { get }
}

/// A driver for scales that broadcast their readings in advertisements (no connection needed).
public protocol BroadcastScaleDriver: Driver {
    /// The reading in this advertisement, or nil when it carries none.
    func reading(from advertisement: Advertisement) -> WeightReading?
    /// The reading in this advertisement from the device at `address`, or nil when it carries
    /// none; throws when the device encrypts its readings and they cannot be read (no key, or a
    /// key that does not decrypt them), so a person hears that instead of seeing nothing. The
    /// address is there because such encryption binds it in (a MiBeacon's nonce holds the MAC).
    func reading(from advertisement: Advertisement, sentBy address: BLEAddress) throws(BroadcastReadingError) -> WeightReading?
}

extension BroadcastScaleDriver {
    /// By default a driver's readings need no key: the address changes nothing.
    public func reading(from advertisement: Advertisement, sentBy address: BLEAddress) throws(BroadcastReadingError) -> WeightReading? {
        reading(from: advertisement)
    }
}

/// Why a broadcasting scale's advertisement gave no reading although it carries one: its
/// readings are encrypted and the key is missing or wrong. The words say what to do.
public enum BroadcastReadingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No key for this device was given; the text says which key and how to give it.
    case needsKey(String)
    /// The key given does not decrypt this device's readings (the integrity check failed, so
    /// no reading is made up from the wrong plaintext); the text says what to check.
    case wrongKey(String)

    /// The driver's words.
    public var description: String {
        switch self {
        case .needsKey(let words), .wrongKey(let words): words
        }
    }
}

/// A driver for rumble/LED pads: opens the device a haptics URI names (`usb:`, `hidraw:`,
/// `evdev:`) as an actuator, which `RumbleScheduler` then plays cues on.
public protocol HapticPadDriver: Driver {
    /// Opens the pad a claimed URI names; throws when it is missing, busy or not permitted.
    func openActuator(_ uri: DeviceURI) throws(HapticError) -> any RumbleActuator
    /// The same, with choices a person made on the command line; drivers without such choices
    /// ignore them.
    func openActuator(_ uri: DeviceURI, options: HapticOpenOptions) throws(HapticError) -> any RumbleActuator
}

extension HapticPadDriver {
    /// By default ignores the options and opens the pad as `openActuator(_:)` does.
    public func openActuator(_ uri: DeviceURI, options: HapticOpenOptions) throws(HapticError) -> any RumbleActuator {
        try openActuator(uri)
    }
}

/// How to open a pad.
public struct HapticOpenOptions: Hashable, Sendable {
    /// Take the device from the kernel driver that holds it (and give it back on close), for
    /// pads such as the Xbox 360 that xpad claims. Off unless asked: it removes the kernel's
    /// own node for the pad while we hold it.
    public var detachKernelDriver: Bool

    /// Builds options; by default the kernel keeps its driver.
    public init(detachKernelDriver: Bool = false) { self.detachKernelDriver = detachKernelDriver }
}
