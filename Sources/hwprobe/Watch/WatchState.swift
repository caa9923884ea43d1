import Foundation

/// What `hwprobe watch` has seen, and the events each new look gives (hwprobe-cli.md,
/// "Additions", `watch`). Pure: fed snapshots of the local sections (after a hotplug event) and
/// advertisements with their times, it says what appeared, went away or changed.
///
/// - Local devices (controllers, cameras, haptic devices, serial ports) are keyed by URI or path:
///   one in a snapshot and not in the last is `added`, the reverse `removed`, the same key with a
///   different object `changed`.
/// - Peripherals are keyed by controller and address: `added` when first heard, `changed` when a
///   claimed reading (`weightKg`) changes, `removed` after `unheardLimit` without an advertisement.
struct WatchState: Sendable {
    struct Event: Equatable, Sendable {
        enum Kind: String, Sendable { case added, removed, changed }
        var kind: Kind
        /// The `list` section's key (`cameras`, `peripherals`, …).
        var section: String
        /// The device as `list` prints it in that section, as compact JSON.
        var device: String
    }

    static let unheardLimit: Duration = .seconds(10)

    private var local: [String: [String: String]] = [:]
    private var peripherals: [String: (device: String, weight: Double?, heard: Duration)] = [:]

    /// The differences between `report`'s local sections and the last snapshot.
    mutating func snapshot(_ report: ListReport) -> [Event] {
        let sections: [(String, [(String, String)])] = [
            ("controllers", report.controllers.map { ($0.uri, Self.json($0)) }),
            ("cameras", report.cameras.map { ($0.uri, Self.json($0)) }),
            ("hapticDevices", report.hapticDevices.map { ($0.uri, Self.json($0)) }),
            ("serialPorts", report.serialPorts.map { ($0.path, Self.json($0)) }),
        ]
        var events: [Event] = []
        for (section, devices) in sections {
            let before = local[section] ?? [:]
            var now: [String: String] = [:]
            for (key, device) in devices {
                now[key] = device
                if let old = before[key] {
                    if old != device { events.append(Event(kind: .changed, section: section, device: device)) }
                } else {
                    events.append(Event(kind: .added, section: section, device: device))
                }
            }
            for (key, device) in before.sorted(by: { $0.key < $1.key }) where now[key] == nil {
                events.append(Event(kind: .removed, section: section, device: device))
            }
            local[section] = now
        }
        return events
    }

    /// An advertisement of `peripheral` heard at `time` (since the watch began).
    mutating func heard(_ peripheral: ListReport.Peripheral, at time: Duration) -> Event? {
        let key = peripheral.hci + " " + peripheral.address
        let device = Self.json(peripheral)
        defer { peripherals[key] = (peripherals[key]?.device ?? device, peripheral.weightKg, time) }
        guard let known = peripherals[key] else { return Event(kind: .added, section: "peripherals", device: device) }
        guard known.weight != peripheral.weightKg, peripheral.weightKg != nil else { return nil }
        peripherals[key] = (device, peripheral.weightKg, time)
        return Event(kind: .changed, section: "peripherals", device: device)
    }

    /// Peripherals not heard for `unheardLimit` by `time`, now removed.
    mutating func sweep(at time: Duration) -> [Event] {
        let gone = peripherals.filter { time - $0.value.heard >= Self.unheardLimit }.sorted { $0.key < $1.key }
        for (key, _) in gone { peripherals[key] = nil }
        return gone.map { Event(kind: .removed, section: "peripherals", device: $0.value.device) }
    }

    /// When the next peripheral would go unheard, if any is being watched.
    var nextSweep: Duration? { peripherals.values.map(\.heard).min().map { $0 + Self.unheardLimit } }

    static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// One line of `--json` output.
    static func line(_ event: Event, at time: Duration) -> String {
        let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
        return #"{"device":"# + event.device + #","event":""# + event.kind.rawValue + #"","section":""# + event.section
            + #"","t":"# + String(format: "%.3f", seconds) + "}\n"
    }
}
