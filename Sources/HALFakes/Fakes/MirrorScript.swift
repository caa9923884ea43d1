import HAL

/// How the simulated mirror, its scale and the person using them behave: the timings of a
/// good scan by default, and at most one injected fault.
public struct MirrorScript: Sendable, Hashable {
    /// The advertised local name, the one a person picks in the device list.
    public var name = "Mirror 4F2A"
    /// The mirror's random address, fixed so scripts and recordings stay the same run to run.
    public var address = BLEAddress(bytes: [0xC0, 0xFF, 0xEE, 0x00, 0x4F, 0x2A], kind: .random)!
    /// The serial bytes appended to the manufacturer data after the `MR` marker and protocol version.
    public var serial: [UInt8] = [0x00, 0x00, 0x4F, 0x2A]
    /// Signal strength reported when the mirror is discovered, in dBm (a strong, nearby signal).
    public var rssi: Int8 = -48
    /// What `readInfo()` returns; lower `batteryPercent` below 10 to have `startScan` fail with `batteryLow`.
    public var info = MirrorInfo(protocolVersion: 1, firmwareMajor: 1, firmwareMinor: 4, firmwarePatch: 2, batteryPercent: 82)
    /// After connecting, the person switches the scale on.
    public var scalePresentAfter: Duration = .milliseconds(800)
    /// Whether the scale reports itself level once switched on; false lets a flow's level check be tried.
    public var scaleLevel = true
    /// Angle and distance readings as the person turns and slides the scale, each after a pause.
    public var alignmentSteps: [AlignmentStep] = [
        AlignmentStep(after: .milliseconds(400), angleDegrees: -14, distanceCm: 78),
        AlignmentStep(after: .milliseconds(900), angleDegrees: -6, distanceCm: 62),
        AlignmentStep(after: .milliseconds(900), angleDegrees: -1, distanceCm: 51),
    ]
    /// How long the mirror stays in `warmingUp` after the scan token before it is `ready`.
    public var warmUp: Duration = .seconds(3)
    /// After the mirror is ready, the person steps on; the weight settles after `settle`.
    public var stepOnAfterReady: Duration = .milliseconds(1500)
    /// How long after stepping on the weight becomes stable; until then the scale reports 60 % of it.
    public var settle: Duration = .milliseconds(1200)
    /// The person's settled weight, as the scale reports it once stable.
    public var kilograms = 72.35
    /// How long progress takes from 0 to 100 in `scanning` (twenty steps of 5 %).
    public var scanDuration: Duration = .seconds(5)
    /// How long the person waits in `stepOff` before stepping down, which starts processing.
    public var stepOffAfter: Duration = .milliseconds(1500)
    /// How long progress takes from 0 to 100 in `processing` (ten steps of 10 %).
    public var processingDuration: Duration = .seconds(3)
    /// What `readResult()` returns once the scan is `complete`.
    public var result = ScanResult(scanID: 40_213, kilograms: 72.35, bodyFatPercent: 18.4, pointCount: 412_388)
    /// The one thing that goes wrong in this run; nil for a clean scan.
    public var fault: MirrorFault?

    /// The default good-scan timings, with `fault` (if any) injected.
    public init(fault: MirrorFault? = nil) { self.fault = fault }

    /// One position the person moves the scale to while aligning it.
    public struct AlignmentStep: Sendable, Hashable {
        /// The pause before this position is reported, counted from the previous step.
        public var after: Duration
        /// The angle reported, in degrees; negative means the scale must turn left.
        public var angleDegrees: Int8
        /// The distance reported, in centimetres; 40 to 60 counts as aligned.
        public var distanceCm: UInt8
        /// Builds one alignment step.
        public init(after: Duration, angleDegrees: Int8, distanceCm: UInt8) {
            self.after = after
            self.angleDegrees = angleDegrees
            self.distanceCm = distanceCm
        }
    }

    /// The advertisement a v1 mirror sends (docs/mirror-gatt-v1.md, "Advertising").
    public var advertisement: Advertisement {
        Advertisement(flags: 0x06, localName: name, serviceUUIDs: [MirrorScript.serviceUUID],
                      manufacturerData: [0xFFFF: [0x4D, 0x52, info.protocolVersion] + serial])
    }

    /// The mirror as discovery reports it, ready to hand to a fake transport or a flow.
    public var discoveredDevice: DiscoveredDevice {
        DiscoveredDevice(address: address, rssi: rssi, advertisement: advertisement)
    }

    /// `7B9E0001-3C2A-4F1B-9E6D-5A4C3B2A1F00`, spelled here from docs/mirror-gatt-v1.md as the fake's
    /// own (the driver's copy is the MirrorV1 plugin's `MirrorGATT`; the bench finding the fake
    /// through the registry shows the two agree).
    public static let serviceUUID = BluetoothUUID(high: 0x7B9E_0001_3C2A_4F1B, low: 0x9E6D_5A4C_3B2A_1F00)
}

/// Moments of a scan at which a fault can strike.
public enum MirrorPhase: String, Sendable, Hashable, CaseIterable {
    /// A central has just connected.
    case connected
    /// The person has switched the turntable scale on and the mirror sees it.
    case scalePresent
    /// The scale has been moved into the aligned range.
    case aligned
    /// Entering each of the scan machine's own states, in its order (`MirrorScanState` says what
    /// each means): a fault here strikes as the mirror reaches that state.
    case warmingUp, ready, scanning, stepOff, processing, complete
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
    /// The person never switches the scale on, so the mirror never reports it present.
    case scaleNeverPresent
    /// The scale stops at its first alignment step and never reaches the aligned range.
    case neverAligned
    /// Nobody steps onto the scale once the mirror is ready.
    case personNeverStepsOn
    /// The person stays on the scale after capture, so processing never starts.
    case personNeverStepsOff
    /// The battery reads `percent` until a client has seen it low; the person then plugs the
    /// mirror in (unlike a low `MirrorScript.info.batteryPercent`, which stays low for good).
    case lowBattery(percent: UInt8)
}
