import HAL
import HALFakes
import Peripherals
import VirtualController

/// What goes wrong on the simulated bench: `sim:?fault=…&at=…&code=…&backup=…`. The bench is
/// where a person tries how hwprobe behaves before a real device misbehaves, and where tests
/// drive the flows' failure paths end to end. A mirror fault strikes once in the mirror's life,
/// so Try Again after it succeeds, as it would after a real hiccup.
struct SimulatedScenario: Hashable, Sendable {
    var fault: MirrorFault?
    var backup = BackupView.complete
    /// Departures from docs/mirror-gatt-v1.md (`deviation=a,b`), for seeing `check` catch them.
    var deviations: Set<MirrorPeripheral.Deviation> = []
    /// Which family the bench's scale is (`scale=ID`, a scale driver's id, or `mi-s400`, which
    /// `mi-scale` reads with the demo bind key); nil: the standard scale the bench has always had.
    var scale: String?
    /// The weight the bench's person has (`weight=KG`); nil: the bench's 72.35 kg.
    var weightKilograms: Double?

    /// What the bench camera shows.
    enum BackupView: String, CaseIterable, Hashable, Sendable {
        /// Every code of the demo backup, out of order, with a repeat and a stray code.
        case complete
        /// Two codes, then a third that contradicts the second: the set is damaged.
        case damaged
        /// Two of the four codes, then the camera stops.
        case short
        /// Frames with nothing to read, for ever.
        case none
        /// The demo backup made with a costly key derivation (seconds), to cancel while it runs.
        case slow
    }

    static let faults = ["disconnect", "error", "silence", "step-off-early", "no-scale", "never-aligned",
                         "never-steps-on", "never-steps-off", "low-battery"]
    static let keys: Set<String> = ["fault", "at", "code", "backup", "deviation", "scale", "weight"]
    /// What `weight=` takes: every scale family here reads 0.5–300 kg (a QN broadcast below 0.5 kg
    /// is no reading at all).
    static let weights = 0.5...300.0

    init() {}

    init(options: [String: String]) throws(CLIFailure) {
        if let unknown = options.keys.sorted().first(where: { !Self.keys.contains($0) }) {
            throw Self.usage("unknown sim: option '\(unknown)'")
        }
        let phaseName = options["at"] ?? MirrorPhase.scanning.rawValue
        guard let phase = MirrorPhase(rawValue: phaseName) else {
            throw Self.usage("at=\(phaseName) is no phase of a scan (one of \(MirrorPhase.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if let name = options["fault"] {
            switch name {
            case "disconnect": fault = .disconnect(in: phase, after: .milliseconds(300))
            case "error":
                let text = options["code"] ?? "1"
                guard let code = UInt8(text), code > 0 else { throw Self.usage("code=\(text) is no mirror error code (1–6, or up to 255)") }
                fault = .error(MirrorErrorCode(code: code), in: phase, after: .milliseconds(300))
            case "silence": fault = .silence(in: phase)
            case "step-off-early": fault = .stepOffEarly(atProgress: 40)
            case "no-scale": fault = .scaleNeverPresent
            case "never-aligned": fault = .neverAligned
            case "never-steps-on": fault = .personNeverStepsOn
            case "never-steps-off": fault = .personNeverStepsOff
            case "low-battery": fault = .lowBattery(percent: 12)
            default: throw Self.usage("fault=\(name) is not one the bench knows (one of \(Self.faults.joined(separator: ", ")))")
            }
        }
        if let list = options["deviation"] {
            for name in list.split(separator: ",").map(String.init) {
                guard let deviation = MirrorPeripheral.Deviation(rawValue: name) else {
                    throw Self.usage("deviation=\(name) is not one the bench knows (one of "
                                     + MirrorPeripheral.Deviation.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                deviations.insert(deviation)
            }
        }
        if let family = options["scale"] {
            guard ScalePeripherals.familyIDs.contains(family) else {
                throw Self.usage("scale=\(family) is not a scale family the bench has (one of \(ScalePeripherals.familyIDs.joined(separator: ", ")))")
            }
            scale = family
        }
        if let text = options["weight"] {
            guard let kilograms = Double(text), Self.weights.contains(kilograms) else {
                throw Self.usage("weight=\(text) is not a weight the bench's scale can show (kilograms, 0.5 to 300)")
            }
            weightKilograms = kilograms
        }
        if let view = options["backup"] {
            guard let parsed = BackupView(rawValue: view) else {
                throw Self.usage("backup=\(view) is not one the bench knows (one of \(BackupView.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            backup = parsed
        }
    }

    static func usage(_ why: String) -> CLIFailure {
        CLIFailure(kind: .usage, message: "\(why); e.g. sim:?fault=disconnect&at=scanning, sim:?backup=damaged or sim:?scale=qn-scale&weight=80.5")
    }
}
