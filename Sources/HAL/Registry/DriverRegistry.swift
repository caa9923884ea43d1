/// Which driver claimed a device, by which rule, and which other drivers also matched.
public struct Claim: Sendable {
    /// The driver that won, whose factories open the device.
    public var driver: any Driver
    /// The winner's most specific rule that matched, which is why it won.
    public var rule: MatchRule
    /// Drivers that matched less specifically, best first: what this claim won over.
    public var alsoMatched: [(driver: String, rule: MatchRule)]

    /// The winner's identity card.
    public var descriptor: DriverDescriptor { driver.descriptor }
    /// One line saying who claimed the device, by which rule, and over whom, for `list` and `-v` output.
    public var reason: String {
        "\(descriptor.id) by \(rule)" + (alsoMatched.isEmpty ? "" :
            " (over " + alsoMatched.map { "\($0.driver) by \($0.rule)" }.joined(separator: ", ") + ")")
    }
}

/// The plugin registry, bootstrapped once at start-up with every linked driver. Matching is pure:
/// the most specific matching rule wins; on a tie, the driver registered first.
public struct DriverRegistry: Sendable {
    /// Every linked driver, in registration order; the order breaks ties between equally specific rules.
    public let drivers: [any Driver]

    /// Builds the registry; list drivers in the order ties should go.
    public init(drivers: [any Driver]) {
        self.drivers = drivers
    }

    /// The driver that claims `subject`, with the runners-up; nil when no driver's rule matches it.
    public func claim(_ subject: DeviceSubject) -> Claim? {
        var candidates: [(order: Int, driver: any Driver, rule: MatchRule)] = []
        for (order, driver) in drivers.enumerated() {
            let best = driver.descriptor.rules.filter { $0.matches(subject) }.max { $0.specificity < $1.specificity }
            if let best { candidates.append((order, driver, best)) }
        }
        candidates.sort { a, b in
            a.rule.specificity != b.rule.specificity ? a.rule.specificity > b.rule.specificity : a.order < b.order
        }
        guard let winner = candidates.first else { return nil }
        return Claim(driver: winner.driver, rule: winner.rule,
                     alsoMatched: candidates.dropFirst().map { ($0.driver.descriptor.id, $0.rule) })
    }

    /// The linked driver whose descriptor has this `id` (`mi-scale`); nil when none has.
    public func driver(id: String) -> (any Driver)? {
        drivers.first { $0.descriptor.id == id }
    }

    /// Every USB ID some driver claims, for enumerating only the devices that matter.
    public var usbIdentities: [USBIdentity] {
        drivers.flatMap { $0.descriptor.rules }.compactMap {
            if case .usb(let v, let p) = $0 { USBIdentity(vendor: v, product: p) } else { nil }
        }
    }
}
