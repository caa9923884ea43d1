/// A virtual scale of any family: a peripheral with a person who can step on and off and whose
/// weight can change. The controls are what a `serve` screen binds keys to and what tests press;
/// they take effect at the peripheral's next `advance(to:)` (its `nextDeadline` asks for one at
/// once), on the controller's timebase, so a manual clock still decides when things happen.
package protocol ScalePeripheral: VirtualPeripheral {
    /// The id of the driver whose protocol this peripheral speaks (`qn-scale`, `mi-scale` …).
    var driverID: String { get }
    /// The person's weight: what the display settles to.
    var weightKilograms: Double { get }
    /// What the display shows now; nil while nobody stands on the scale.
    var display: ScaleSimulation.Reading? { get }
    /// Someone is on the scale.
    var isOccupied: Bool { get }

    mutating func stepOn()
    mutating func stepOff()
    /// Clamped to `ScaleSimulation.weightRange`; with someone on the scale the display settles again.
    mutating func setWeight(_ kilograms: Double)
}

/// When the person gets on the scale without being told to.
package enum ScaleArrival: Hashable, Sendable {
    /// A connected scale is stepped on as soon as a central is ready for readings (the family's
    /// opening is done) and stepped off when it leaves; a broadcasting one is stepped on at
    /// power-up. The simulated bench's way: no keyboard, and every `weigh` gets a weight.
    case automatic
    /// Only `stepOn()` and `stepOff()` move the person: a `serve` screen's keys, or a test's.
    case manual
}

/// The keys every served scale takes (`hwprobe serve SCALE`), whatever its family: the person
/// steps on or off, and the weight moves by half a kilogram.
package enum ScaleKeys {
    package static let controls = [
        PeripheralControl(key: "s", label: "step on/off"),
        PeripheralControl(key: "+", label: "weight +0.5 kg"),
        PeripheralControl(key: "-", label: "weight -0.5 kg"),
    ]

    package static func summary(_ scale: some ScalePeripheral) -> String {
        let shown = scale.display.map { " · shows \(kilogramsText($0.kilograms))" + ($0.stable ? " stable" : "") } ?? ""
        return (scale.isOccupied ? "occupied" : "empty") + " · person " + kilogramsText(scale.weightKilograms) + shown
    }

    package static func perform(_ key: Character, on scale: inout some ScalePeripheral) {
        switch key {
        case "s": if scale.isOccupied { scale.stepOff() } else { scale.stepOn() }
        case "+": scale.setWeight(scale.weightKilograms + 0.5)
        case "-": scale.setWeight(scale.weightKilograms - 0.5)
        default: break
        }
    }
}
