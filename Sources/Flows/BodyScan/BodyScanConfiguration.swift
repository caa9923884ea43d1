import HAL

/// A warning time and a give-up time for one wait: every waiting state has both, so no screen
/// can sit forever and nobody waits in silence until the failure.
public struct Deadline: Hashable, Sendable {
    public var warning: Duration
    public var failure: Duration

    public init(warning: Duration, failure: Duration) {
        self.warning = warning
        self.failure = failure
    }
}

/// Deadlines per waiting state; the defaults are the profile's (mirror-gatt-v1.md, "What a client must do").
public struct BodyScanDeadlines: Hashable, Sendable {
    public var findMirror = Deadline(warning: .seconds(8), failure: .seconds(20))
    public var pickMirror = Deadline(warning: .seconds(30), failure: .seconds(120))
    public var connect = Deadline(warning: .seconds(5), failure: .seconds(15))
    public var scalePresent = Deadline(warning: .seconds(20), failure: .seconds(60))
    public var preflight = Deadline(warning: .seconds(5), failure: .seconds(15))
    public var aligned = Deadline(warning: .seconds(45), failure: .seconds(120))
    public var confirm = Deadline(warning: .seconds(30), failure: .seconds(120))
    public var warmingUp = Deadline(warning: .seconds(15), failure: .seconds(30))
    public var onScaleAndStable = Deadline(warning: .seconds(30), failure: .seconds(90))
    /// Between progress notifications while scanning.
    public var scanning = Deadline(warning: .seconds(10), failure: .seconds(30))
    public var steppingOff = Deadline(warning: .seconds(10), failure: .seconds(30))
    public var processing = Deadline(warning: .seconds(45), failure: .seconds(120))
    /// A single write or read to the mirror.
    public var command = Deadline(warning: .seconds(5), failure: .seconds(10))

    public init() {}
}

public struct BodyScanConfiguration: Sendable {
    public var heightMillimetres: UInt16 = 1700
    public var units: MeasurementSystem = .metric
    /// Answer the flow's questions without asking: the only or nearest mirror, alignment confirmed.
    public var autoAnswer = false
    /// Use only this mirror.
    public var mirrorAddress: BLEAddress?
    public var deadlines = BodyScanDeadlines()
    public var motion = MotionSettings()
    /// After the first mirror appears, how long to keep looking for others before choosing.
    public var discoveryWindow: Duration = .milliseconds(1500)
    /// Which discovered peripherals are mirrors. hwprobe answers from the driver registry.
    public var isMirror: @Sendable (DiscoveredDevice) -> Bool = { MirrorAdvertisement.matches($0.advertisement) }
    /// The 16 bytes written as `scanToken`; random by default.
    public var makeScanToken: @Sendable () -> [UInt8] = { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    public init() {}
}

/// The v1 profile's advertisement (mirror-gatt-v1.md, "Advertising"), for when no registry is at hand.
public enum MirrorAdvertisement {
    public static let service = MirrorGATT.service

    public static func matches(_ advertisement: Advertisement) -> Bool {
        advertisement.serviceUUIDs.contains(service)
            || advertisement.manufacturerData[0xFFFF]?.starts(with: [0x4D, 0x52]) == true
    }
}
