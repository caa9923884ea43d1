import HAL

/// How the simulated mirror, its scale and the person using them behave: the timings of a
/// good scan by default, and at most one injected fault.
public struct MirrorScript: Sendable, Hashable {
    public var name = "Mirror 4F2A"
    public var address = BLEAddress(bytes: [0xC0, 0xFF, 0xEE, 0x00, 0x4F, 0x2A], kind: .random)!
    public var serial: [UInt8] = [0x00, 0x00, 0x4F, 0x2A]
    public var rssi: Int8 = -48
    public var info = MirrorInfo(protocolVersion: 1, firmwareMajor: 1, firmwareMinor: 4, firmwarePatch: 2, batteryPercent: 82)
    /// After connecting, the person switches the scale on.
    public var scalePresentAfter: Duration = .milliseconds(800)
    public var scaleLevel = true
    /// Angle and distance readings as the person turns and slides the scale, each after a pause.
    public var alignmentSteps: [AlignmentStep] = [
        AlignmentStep(after: .milliseconds(400), angleDegrees: -14, distanceCm: 78),
        AlignmentStep(after: .milliseconds(900), angleDegrees: -6, distanceCm: 62),
        AlignmentStep(after: .milliseconds(900), angleDegrees: -1, distanceCm: 51),
    ]
    public var warmUp: Duration = .seconds(3)
    /// After the mirror is ready, the person steps on; the weight settles after `settle`.
    public var stepOnAfterReady: Duration = .milliseconds(1500)
    public var settle: Duration = .milliseconds(1200)
    public var kilograms = 72.35
    public var scanDuration: Duration = .seconds(5)
    public var stepOffAfter: Duration = .milliseconds(1500)
    public var processingDuration: Duration = .seconds(3)
    public var result = ScanResult(scanID: 40_213, kilograms: 72.35, bodyFatPercent: 18.4, pointCount: 412_388)
    public var fault: MirrorFault?

    public init(fault: MirrorFault? = nil) { self.fault = fault }

    public struct AlignmentStep: Sendable, Hashable {
        public var after: Duration
        public var angleDegrees: Int8
        public var distanceCm: UInt8
        public init(after: Duration, angleDegrees: Int8, distanceCm: UInt8) {
            self.after = after
            self.angleDegrees = angleDegrees
            self.distanceCm = distanceCm
        }
    }

    /// The advertisement a v1 mirror sends (mirror-gatt-v1.md, "Advertising").
    public var advertisement: Advertisement {
        Advertisement(flags: 0x06, localName: name, serviceUUIDs: [MirrorScript.serviceUUID],
                      manufacturerData: [0xFFFF: [0x4D, 0x52, info.protocolVersion] + serial])
    }

    public var discoveredDevice: DiscoveredDevice {
        DiscoveredDevice(address: address, rssi: rssi, advertisement: advertisement)
    }

    /// `7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00`, spelled here from mirror-gatt-v1.md as the fake's
    /// own (the driver's copy is the MirrorV1 plugin's `MirrorGATT`; the bench finding the fake
    /// through the registry shows the two agree).
    public static let serviceUUID = BluetoothUUID(high: 0x7B9E_0001_3C2A_4F1B, low: 0x9E6D_5A4C_3B2A_1F00)
}

/// Moments of a scan at which a fault can strike.
public enum MirrorPhase: String, Sendable, Hashable, CaseIterable {
    case connected, scalePresent, aligned, warmingUp, ready, scanning, stepOff, processing, complete
}

/// One thing going wrong in a simulated scan.
public enum MirrorFault: Sendable, Hashable {
    /// The link drops `after` the phase begins.
    case disconnect(in: MirrorPhase, after: Duration)
    /// The mirror enters its error state with this code.
    case error(MirrorErrorCode, in: MirrorPhase, after: Duration)
    /// The mirror stops notifying from this phase on (a stuck peripheral).
    case silence(in: MirrorPhase)
    /// The person steps off while the scan is at this progress.
    case stepOffEarly(atProgress: UInt8)
    case scaleNeverPresent
    case neverAligned
    case personNeverStepsOn
    case personNeverStepsOff
}
