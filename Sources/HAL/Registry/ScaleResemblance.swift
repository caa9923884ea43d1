/// What an unclaimed BLE device looks like, when it looks like a scale: the family its vendor
/// service or name belongs to and what would be needed to read it. So `list` can say "a scale,
/// no driver, resembles the LeFu family" instead of a bare "unclaimed", and `weigh` can refuse it
/// at once with the same words. Rules are data, like drivers' rules, so the answer can say why.
public struct ScaleResemblance: Hashable, Sendable {
    /// The family's name as people meet it (`QN / Yolanda (Renpho, FITINDEX …)`).
    public var family: String
    /// Matches when any one rule does; the most specific matching rule across the table wins.
    public var rules: [MatchRule]

    /// Builds a catalogue entry.
    public init(family: String, rules: [MatchRule]) {
        self.family = family
        self.rules = rules
    }

    /// The sentence `list` shows as `hint` and `weigh` says: what the device resembles, by which
    /// fact, and what a person can do so a driver can be written or chosen.
    public func hint(by rule: MatchRule) -> String {
        "looks like a scale of the \(family) family (\(rule)), but no driver here reads this model: "
            + "run `hwprobe gatt` on it and attach the output and a recording (`--record FILE`) to an issue"
    }
}

/// A resemblance found for a device, with the rule that found it.
public struct ScaleLikeness: Hashable, Sendable {
    /// The catalogue entry the device resembles.
    public var resemblance: ScaleResemblance
    /// The rule that matched, quoted in the hint as the reason.
    public var rule: MatchRule
    /// The sentence to show the person: what the device looks like and what to do about it.
    public var hint: String { resemblance.hint(by: rule) }
}

extension ScaleResemblance {
    /// Vendor services and names of the consumer scale families (issue 18's table), and the SIG
    /// weight services themselves (a device that lists them but that the standard driver did
    /// not claim has something odd about it). Consulted only for devices no driver claims.
    /// Services from openScale's handlers (oliexdev/openScale, android_app/…/bluetooth/scales/:
    /// QNHandler.kt FFE0/FFF0, MGBHandler.kt FFB0, OneByoneHandler.kt FFF0, YunmaiHandler.kt
    /// FFE0, BeurerSanitasHandler.kt FFE0, MedisanaBs44xHandler.kt 78B2/7802/7892,
    /// EtekcityFit8SHandler.kt FFD0) and the families table of issue 18.
    public static let catalog: [ScaleResemblance] = [
        ScaleResemblance(family: "QN / Yolanda, Yunmai or Beurer / Sanitas (all three use FFE0)",
                         rules: [.serviceUUID(BluetoothUUID(0xFFE0))]),
        ScaleResemblance(family: "QN / Yolanda or 1byone / Eufy (both use FFF0)",
                         rules: [.serviceUUID(BluetoothUUID(0xFFF0))]),
        ScaleResemblance(family: "QN / Yolanda (Renpho, FITINDEX …)",
                         rules: [.serviceUUID(BluetoothUUID(0xAE00)), .namePrefix("QN-Scale"), .namePrefix("Renpho")]),
        ScaleResemblance(family: "LeFu / ICOMON", rules: [.serviceUUID(BluetoothUUID(0xFFB0)), .namePrefix("Swan"),
                                                         .namePrefix("icomon")]),
        ScaleResemblance(family: "Yunmai", rules: [.namePrefix("YUNMAI"), .manufacturer(companyID: 0x1320, prefix: [])]),
        ScaleResemblance(family: "Beurer / Sanitas / SilverCrest", rules: [.namePrefix("BEURER"), .namePrefix("SANITAS")]),
        ScaleResemblance(family: "1byone / Eufy", rules: [.namePrefix("eufy"), .namePrefix("Eufy")]),
        ScaleResemblance(family: "Medisana / Trisa", rules: [.serviceUUID(BluetoothUUID(0x78B2)),
                                                            .serviceUUID(BluetoothUUID(0x7802)),
                                                            .serviceUUID(BluetoothUUID(0x7892))]),
        ScaleResemblance(family: "Etekcity", rules: [.serviceUUID(BluetoothUUID(0xFFD0)),
                                                    .manufacturer(companyID: 0x06D0, prefix: [])]),
        ScaleResemblance(family: "Chipsea / OKOK broadcast", rules: [.manufacturer(companyID: 0x20CA, prefix: []),
                                                                    .manufacturer(companyID: 0x11CA, prefix: []),
                                                                    .manufacturer(companyID: 0xF0FF, prefix: [])]),
        ScaleResemblance(family: "Bluetooth Weight Scale / Body Composition", rules: [.serviceUUID(BluetoothUUID(0x181D)),
                                                                                     .serviceUUID(BluetoothUUID(0x181B))]),
    ]

    /// The most specific resemblance of `subject` in `catalog`, or nil when it looks like no scale.
    public static func likeness(of subject: DeviceSubject, in catalog: [ScaleResemblance] = catalog) -> ScaleLikeness? {
        var best: ScaleLikeness?
        for resemblance in catalog {
            for rule in resemblance.rules where rule.matches(subject) {
                if best.map({ rule.specificity > $0.rule.specificity }) ?? true {
                    best = ScaleLikeness(resemblance: resemblance, rule: rule)
                }
            }
        }
        return best
    }
}
