import HAL

/// Every screen of the body scan, in one voice: short imperative titles, one sentence of help,
/// the mirror's own words never shown raw.
enum BodyScanScreens {
    static func lookingForMirror() -> Screen {
        Screen(icon: "dot.radiowaves.left.and.right", title: "Looking for your mirror",
               subtitle: "Make sure the mirror is switched on and no more than a few metres away.", content: .spinner)
    }

    static func connecting(to name: String) -> Screen {
        Screen(icon: "dot.radiowaves.left.and.right", title: "Connecting to \(name)",
               subtitle: "Stay close to the mirror for a moment.", content: .spinner)
    }

    static func pickMirror(_ mirrors: [DiscoveredDevice]) -> Screen {
        Screen(icon: "list.bullet.rectangle", title: "Choose your mirror",
               subtitle: "More than one mirror is nearby. Pick the one in front of you.",
               content: .pickList(mirrors.map {
                   // The id carries the address type, so picking a random-address mirror finds it again.
                   // The address beside the name: two mirrors of one model have the same name.
                   PickItem(id: "\($0.address)/\($0.address.kind.rawValue)", title: $0.name ?? $0.address.description,
                            detail: $0.name == nil ? "\($0.rssi) dBm" : "\($0.address) · \($0.rssi) dBm")
               }))
    }

    static func waitForScale() -> Screen {
        Screen(icon: "scalemass", title: "Switch on the scale",
               subtitle: "Press the button on the turntable scale. The mirror finds it by itself.", content: .spinner)
    }

    static func preflight() -> Screen {
        Screen(icon: "checklist", title: "Checking your mirror",
               subtitle: "Battery, software and whether the scale stands level.", content: .spinner)
    }

    static func alignScale(_ alignment: Alignment?) -> Screen {
        Screen(icon: "scope", title: "Line up the scale",
               subtitle: "Place the scale square to the mirror, about half a metre away.",
               content: .none, footer: alignment.map { Footer(alignmentTip($0), tone: .secondary) })
    }

    /// The alignment tip: what to do next, from the mirror's latest angle and distance.
    static func alignmentTip(_ alignment: Alignment) -> String {
        var steps: [String] = []
        let angle = Int(alignment.angleDegrees)
        if abs(angle) > 3 { steps.append("turn the scale \(abs(angle))° to the \(angle < 0 ? "left" : "right")") }
        let distance = Int(alignment.distanceCm)
        if distance > 60 { steps.append("move it \(distance - 50) cm closer") }
        if distance < 40 { steps.append("move it \(50 - distance) cm further away") }
        guard let first = steps.first else { return "Lined up. Hold it there." }
        let sentence = ([first.prefix(1).uppercased() + first.dropFirst()] + steps.dropFirst()).joined(separator: " and ")
        return sentence + "."
    }

    static let confirmActionID = "confirm"
    static let realignActionID = "realign"

    static func confirmAlignment() -> Screen {
        Screen(icon: "checkmark.circle", title: "Is the scale lined up?",
               subtitle: "The mirror sees it square and at the right distance. Confirm, or line it up again.",
               content: .actions([ScreenAction(id: confirmActionID, title: "Confirm", role: .primary),
                                  ScreenAction(id: realignActionID, title: "Re-align")]))
    }

    static func warmingUp() -> Screen {
        Screen(icon: "sun.max", title: "Warming up the sensors", subtitle: "This takes a few seconds.", content: .spinner)
    }

    static func phoneDown(_ scale: ScaleStatus?) -> Screen {
        let onScale = scale?.occupied == true
        return Screen(icon: "figure.stand", title: "Put your phone down and step on the scale",
                      subtitle: "Stand in the middle, arms slightly away from your body.",
                      content: onScale ? .none : .spinner,
                      footer: onScale ? Footer("Hold still…", tone: .secondary) : nil)
    }

    static func countdown(_ number: Int, motion: MotionSettings) -> Screen {
        Screen(icon: "timer", title: "Hold still", subtitle: "The scan starts in", content: .countdown(number),
               motion: motion.apply(.numericText))
    }

    static func scanning(progress: UInt8, motion: MotionSettings) -> Screen {
        Screen(icon: "viewfinder", title: "Scanning", subtitle: "Stay still until the turntable stops.",
               content: .progress(value: Double(progress) / 100, line: "\(progress) % captured"), motion: motion.apply(.numericText))
    }

    static func stepOff() -> Screen {
        Screen(icon: "figure.walk", title: "Step off the scale", subtitle: "The scan is captured. Step off carefully.")
    }

    static func processing(progress: UInt8, motion: MotionSettings) -> Screen {
        Screen(icon: "gearshape.2", title: "Building your model", subtitle: "This can take up to a minute.",
               content: .progress(value: Double(progress) / 100, line: "\(progress) % built"), motion: motion.apply(.numericText))
    }

    static let doneActionID = "done"
    static let retryActionID = "retry"

    static func complete(_ result: ScanResult, motion: MotionSettings) -> Screen {
        let weight = (result.kilograms * 100).rounded() / 100
        let fat = (result.bodyFatPercent * 10).rounded() / 10
        return Screen(icon: "checkmark.seal.fill", title: "Scan complete", subtitle: "\(weight) kg · \(fat) % body fat",
                      content: .actions([ScreenAction(id: doneActionID, title: "Done", role: .primary)]),
                      motion: motion.apply(.bounce),
                      footer: Footer("\(grouped(result.pointCount)) points captured", tone: .secondary))
    }

    /// 412388 → "412,388".
    static func grouped(_ value: UInt32) -> String {
        var digits = Array(String(value))
        var out: [Character] = []
        while digits.count > 3 {
            out = [","] + digits.suffix(3) + out
            digits.removeLast(3)
        }
        return String(digits + out)
    }

    static func failed(_ failure: BodyScanFailure, motion: MotionSettings) -> Screen {
        let title = switch failure.reason {
        case .mirrorError: "The scan stopped"
        case .timedOut: "This is taking too long"
        case .disconnected: "Lost the mirror"
        case .preflight: "The mirror isn't ready"
        case .notFound: "No mirror found"
        }
        return Screen(icon: "exclamationmark.triangle.fill", title: title, subtitle: failure.message,
                      content: .actions([ScreenAction(id: retryActionID, title: "Try Again", role: .primary),
                                         ScreenAction(id: doneActionID, title: "Done")]),
                      motion: motion.apply(.shake), footer: Footer(failure.tip, tone: .error))
    }

    /// The *taking longer than usual* line each waiting state shows before it gives up.
    static func slowHint(_ state: BodyScanState) -> String {
        let hint = switch state {
        case .connecting: "Is the mirror switched on and close by?"
        case .selectMirror: "Pick the mirror in front of you."
        case .waitForScale: "Is the scale switched on and near the mirror?"
        case .preflight: "The mirror is slow to answer."
        case .alignScale: "Follow the tip to line up the scale."
        case .confirmAlignment: "Confirm when the scale is lined up."
        case .warmingUp: "The sensors are still warming up."
        case .phoneDown: "Step onto the middle of the scale and stand still."
        case .scanning: "The mirror has gone quiet."
        case .stepOff: "Step off the scale to finish."
        case .processing: "Still building your model."
        case .countdown, .complete, .failed: ""
        }
        return "Taking longer than usual. " + hint
    }

    /// The tip for each mirror error code (docs/mirror-gatt-v1.md, `scanState`).
    static func tip(for code: MirrorErrorCode) -> (message: String, tip: String) {
        switch code {
        case .userMoved: ("You moved during the scan.", "Stand still with your arms slightly away from your body, then try again.")
        case .scaleNotLevel: ("The scale isn't level.", "Put it on a flat, hard floor and try again.")
        case .sensorFault: ("A mirror sensor reported a fault.", "Restart the mirror. If it happens again, contact support.")
        case .steppedOffEarly: ("You stepped off before the scan finished.", "Stay on the scale until it asks you to step off.")
        case .mirrorTimedOut: ("The mirror stopped waiting.", "Start again when you're ready.")
        case .batteryLow: ("The mirror's battery is too low to scan.", "Plug the mirror in and try again.")
        case .unknown(let c): ("The mirror reported an unknown error (code \(c)).", "Restart the mirror and try again.")
        }
    }
}
