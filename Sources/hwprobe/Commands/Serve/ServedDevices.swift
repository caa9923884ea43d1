import HAL
import HALFakes
import Peripherals
import Transports

/// A device `serve` plays: the peripheral value and how it is to be advertised.
struct ServedDevice: Sendable {
    var peripheral: any VirtualPeripheral
    var options: PeripheralHost.Options
    /// What the screen and messages call it.
    var label: String
}

/// `serve`'s DEVICE argument (hwprobe-cli.md, third edition): `mirror-v1[?fault=…&deviation=…]`,
/// a scale by driver id, `replay:FILE[?address=ADDR]`, `profile:FILE`. Every form also takes
/// `advertising=legacy|extended` (the form on air; by default the device's own, extended only
/// when its data needs it) and `own-address=public` (the controller's public address even for a
/// device that has a static random one).
enum ServedDevices {
    static let common: Set<String> = ["advertising", "own-address"]

    /// Scales served by driver id, besides `standard-scale`: the device side of each family's
    /// protocol. None yet on this branch; the lead points this at the `scales` branch's
    /// `ScalePeripherals.make(driverID:weightKilograms:address:…)` when merging.
    /// Every scale family a driver reads, by driver id (`qn-scale`, `mi-scale` …): the device side
    /// of its protocol, at the bench scale's address, with the bench person's body composition.
    static let scaleTable: [String: @Sendable (_ kilograms: Double, _ name: String?) -> (any VirtualPeripheral)?] = Dictionary(
        uniqueKeysWithValues: ScalePeripherals.familyIDs.filter { $0 != StandardScaleDevice.driverID }.map { id in
            (id, { @Sendable kilograms, name -> (any VirtualPeripheral)? in
                ScalePeripherals.make(driverID: id, weightKilograms: kilograms, address: SimulatedBench().scale.device.address,
                                      composition: .bench, name: name)
            })
        })

    static func resolve(_ text: String, name: String?, warn: @escaping @Sendable (String) -> Void) throws(CLIFailure) -> ServedDevice {
        let (base, query) = split(text)
        var options = PeripheralHost.Options(name: name)
        if let form = query["advertising"] {
            guard let choice = PeripheralHost.AdvertisingChoice(rawValue: form) else {
                throw usage("advertising=\(form) is not a form (legacy, extended or automatic)")
            }
            options.advertising = choice
        }
        if let own = query["own-address"] {
            guard own == "public" else { throw usage("own-address=\(own): only own-address=public is known") }
            options.publicAddress = true
        }
        var rest = query
        for key in common { rest[key] = nil }
        if base.hasPrefix("replay:") {
            return ServedDevice(peripheral: try replay(String(base.dropFirst(7)), options: rest, warn: warn), options: options,
                                label: "replay of \(base.dropFirst(7))")
        }
        if base.hasPrefix("profile:") {
            try noOptions(rest, for: "profile:")
            let path = String(base.dropFirst(8))
            let profile = try ServeProfileFile.read(path)
            return ServedDevice(peripheral: profile.peripheral(name: name), options: options, label: "profile \(profile.name)")
        }
        switch base {
        case "mirror-v1":
            let scenario = try SimulatedScenario(options: rest)
            var script = MirrorScript()
            if let fault = scenario.fault { script.fault = fault }
            if let name { script.name = name }
            let peripheral = MirrorPeripheral(script: script, extendedAdvertising: options.advertising == .extended, deviations: scenario.deviations)
            return ServedDevice(peripheral: peripheral, options: options, label: "mirror-v1")
        case "stream":
            // For measuring: N values of B bytes notified as fast as the link takes them.
            if let unknown = rest.keys.sorted().first(where: { $0 != "count" && $0 != "size" }) { throw usage("unknown option '\(unknown)' for stream (count=N&size=B)") }
            guard let count = Int(rest["count"] ?? "1000"), (1...10_000_000).contains(count),
                  let size = Int(rest["size"] ?? "20"), (4...244).contains(size),
                  let address = BLEAddress(string: "C5:EE:D0:00:00:01/random") else {
                throw usage("stream takes count=1…10000000 and size=4…244")
            }
            return ServedDevice(peripheral: StreamingPeripheral(address: address, count: count, size: size), options: options, label: "stream")
        case "standard-scale":
            let kilograms = try weight(rest)
            return ServedDevice(peripheral: standardScale(kilograms: kilograms, name: name), options: options, label: "standard-scale")
        default:
            if let make = scaleTable[base] {
                let kilograms = try weight(rest)
                if let peripheral = make(kilograms, name) { return ServedDevice(peripheral: peripheral, options: options, label: base) }
            }
            let known = ["mirror-v1", "standard-scale", "stream"] + scaleTable.keys.sorted()
            throw usage("\(base) is no device serve can play (one of \(known.joined(separator: ", ")), replay:FILE or profile:FILE)")
        }
    }

    /// The Weight Scale Service scale `weigh --hci sim:` meets, with the bench's settling
    /// readings ending at `kilograms`.
    static func standardScale(kilograms: Double, name: String?) -> StandardScalePeripheral {
        var device = SimulatedBench().scale.device
        if let name { device.advertisement.localName = name }
        return StandardScalePeripheral(scale: FakeScale(device: device, steps: [
            .init(after: .milliseconds(300), reading: WeightReading(kilograms: kilograms * 0.99, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: kilograms, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: kilograms, stable: true)),
        ]))
    }

    private static func weight(_ options: [String: String]) throws(CLIFailure) -> Double {
        if let unknown = options.keys.sorted().first(where: { $0 != "weight" }) { throw usage("unknown option '\(unknown)' for a scale (weight=KG)") }
        guard let text = options["weight"] else { return 72.35 }
        guard let kilograms = Double(text), kilograms >= 1, kilograms <= 300 else { throw usage("weight=\(text) is not a weight from 1 to 300 kg") }
        return kilograms
    }

    private static func replay(_ path: String, options: [String: String], warn: @escaping @Sendable (String) -> Void) throws(CLIFailure) -> ReplayPeripheral {
        if let unknown = options.keys.sorted().first(where: { $0 != "address" }) { throw usage("unknown option '\(unknown)' for replay: (address=ADDR)") }
        let cassette: BLECassette
        do { cassette = try CassetteReader.read(path: path) } catch { throw CLIFailure(kind: .device, message: "replay:\(path): \(error)") }
        let chosen: BLECassette.Peripheral
        if let text = options["address"] {
            guard let address = BLEAddress(string: text),
                  let found = cassette.peripherals.first(where: { $0.address.bytes == address.bytes }) else {
                throw usage("replay:\(path) holds no device \(text) (it holds " + cassette.peripherals.map(\.address.description).joined(separator: ", ") + ")")
            }
            chosen = found
        } else {
            let connected = cassette.peripherals.filter { !$0.connections.isEmpty }
            let candidates = connected.isEmpty ? cassette.peripherals : connected
            guard candidates.count == 1, let only = candidates.first else {
                throw usage(candidates.isEmpty ? "replay:\(path) holds no device" :
                    "replay:\(path) holds several devices: say which with replay:\(path)?address=ADDR (one of "
                        + candidates.map(\.address.description).joined(separator: ", ") + ")")
            }
            chosen = only
        }
        return ReplayPeripheral(chosen, timing: .recorded, warn: warn)
    }

    private static func noOptions(_ options: [String: String], for kind: String) throws(CLIFailure) {
        if let unknown = options.keys.sorted().first { throw usage("unknown option '\(unknown)' for \(kind)") }
    }

    /// `base?key=value&key=value`.
    static func split(_ text: String) -> (base: String, query: [String: String]) {
        guard let mark = text.firstIndex(of: "?") else { return (text, [:]) }
        var query: [String: String] = [:]
        for pair in text[text.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(text[..<mark]), query)
    }

    static func usage(_ why: String) -> CLIFailure {
        CLIFailure(kind: .usage, message: "\(why); e.g. serve --hci hci:0 mirror-v1?fault=disconnect&at=scanning")
    }
}
