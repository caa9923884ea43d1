import Foundation

/// What `hwprobe watch` has seen, and the events each new look gives (docs/cli.md,
/// `watch`). Pure: fed snapshots of the local sections (after a hotplug event) and
/// advertisements with their times, it says what appeared, went away or changed.
///
/// - Local devices (controllers, cameras, haptic devices, serial ports) are keyed by URI or path:
///   one in a snapshot and not in the last is `added`, the reverse `removed`, the same key with a
///   different object `changed`.
/// - Peripherals are keyed by controller and address: `added` once the picture `list` would give
///   is there (its second advertisement, usually the scan response with its name, or
///   `settleTime` after the first), `changed` when a claimed reading (`weightKg`) changes,
///   `removed` after `unheardLimit` without an advertisement. At most `peripheralLimit` are
///   followed (a flood of made-up addresses costs that much, not what the flood sends).
struct WatchState: Sendable {
    struct Event: Equatable, Sendable {
        enum Kind: String, Sendable { case added, removed, changed }
        var kind: Kind
        /// The `list` section's key (`cameras`, `peripherals`, …).
        var section: String
        /// The device as `list` prints it in that section, as compact JSON.
        var device: String
        /// The device in a few words, for people (what `list`'s table shows of it).
        var summary: String = ""
    }

    static let unheardLimit: Duration = .seconds(10)
    /// How long a peripheral heard once may wait for its scan response before it is announced.
    static let settleTime: Duration = .seconds(1)
    static let peripheralLimit = 1024

    private var local: [String: [String: (device: String, summary: String)]] = [:]
    private struct Followed {
        var peripheral: ListReport.Peripheral
        var heard: Duration
        var firstHeard: Duration
        /// Whether `added` was said.
        var announced: Bool
    }
    private var peripherals: [String: Followed] = [:]
    /// Whether the limit was reached (said once).
    private(set) var overLimit = false

    /// The differences between `report`'s local sections and the last snapshot.
    mutating func snapshot(_ report: ListReport) -> [Event] {
        let sections: [(String, [(key: String, device: String, summary: String)])] = [
            ("controllers", report.controllers.map { ($0.uri, Self.json($0), "\($0.uri) \($0.name)" + ($0.address.map { " \($0)" } ?? "")) }),
            ("cameras", report.cameras.map { ($0.uri, Self.json($0), "\($0.uri) \($0.card)") }),
            ("hapticDevices", report.hapticDevices.map { ($0.uri, Self.json($0), "\($0.uri) \($0.name) (\($0.driver))") }),
            ("serialPorts", report.serialPorts.map { ($0.path, Self.json($0), $0.path + ($0.id.map { " \($0)" } ?? "")) }),
        ]
        var events: [Event] = []
        for (section, devices) in sections {
            let before = local[section] ?? [:]
            var now: [String: (device: String, summary: String)] = [:]
            for entry in devices {
                now[entry.key] = (entry.device, entry.summary)
                if let old = before[entry.key] {
                    if old.device != entry.device { events.append(Event(kind: .changed, section: section, device: entry.device, summary: entry.summary)) }
                } else {
                    events.append(Event(kind: .added, section: section, device: entry.device, summary: entry.summary))
                }
            }
            for (key, old) in before.sorted(by: { $0.key < $1.key }) where now[key] == nil {
                events.append(Event(kind: .removed, section: section, device: old.device, summary: old.summary))
            }
            local[section] = now
        }
        return events
    }

    /// An advertisement of `peripheral` heard at `time` (since the watch began).
    mutating func heard(_ peripheral: ListReport.Peripheral, at time: Duration) -> Event? {
        let key = peripheral.hci + " " + peripheral.address
        guard var followed = peripherals[key] else {
            guard peripherals.count < Self.peripheralLimit else {
                overLimit = true
                return nil
            }
            peripherals[key] = Followed(peripheral: peripheral, heard: time, firstHeard: time, announced: false)
            return nil
        }
        defer { peripherals[key] = followed }
        let before = followed.peripheral
        followed.peripheral = Self.merged(before, peripheral)
        followed.heard = time
        guard followed.announced else {
            followed.announced = true
            return Self.event(.added, followed.peripheral)
        }
        guard before.weightKg != peripheral.weightKg, peripheral.weightKg != nil else { return nil }
        return Self.event(.changed, followed.peripheral)
    }

    /// Peripherals heard once `settleTime` ago and not since, now announced; peripherals not heard
    /// for `unheardLimit` by `time`, now removed (silently when they were never announced).
    mutating func sweep(at time: Duration) -> [Event] {
        var events: [Event] = []
        for key in peripherals.keys.sorted() {
            guard var followed = peripherals[key] else { continue }
            if time - followed.heard >= Self.unheardLimit {
                peripherals[key] = nil
                if followed.announced { events.append(Self.event(.removed, followed.peripheral)) }
            } else if !followed.announced, time - followed.firstHeard >= Self.settleTime {
                followed.announced = true
                peripherals[key] = followed
                events.append(Self.event(.added, followed.peripheral))
            }
        }
        return events
    }

    /// When the next peripheral would be announced or go unheard, if any is being watched.
    var nextSweep: Duration? {
        peripherals.values.map { $0.announced ? $0.heard + Self.unheardLimit : $0.firstHeard + Self.settleTime }.min()
    }

    /// What `list` would print after both advertisements: the newer one's fields, and the older's
    /// where the newer has none (a scan response has the name, the advertisement the services).
    static func merged(_ old: ListReport.Peripheral, _ new: ListReport.Peripheral) -> ListReport.Peripheral {
        var merged = new
        if merged.name == nil { merged.name = old.name }
        if merged.services.isEmpty { merged.services = old.services }
        if merged.driver == nil, merged.hint == nil {
            (merged.driver, merged.kind, merged.reason, merged.hint) = (old.driver, old.kind, old.reason, old.hint)
        }
        // An advertisement with neither a reading nor a reason for none (an idle frame) leaves
        // what the last one said.
        if merged.weightKg == nil, merged.note == nil { merged.note = old.note }
        if merged.weightKg == nil { merged.weightKg = old.weightKg }
        return merged
    }

    static func event(_ kind: Event.Kind, _ peripheral: ListReport.Peripheral) -> Event {
        var words = [peripheral.name ?? "(no name)", "\(peripheral.shownAddress) (\(peripheral.addressType))"]
        if let kind = peripheral.kind { words.append(kind + (peripheral.driver.map { ", driver \($0)" } ?? "")) }
        if let weight = peripheral.weightKg { words.append(String(format: "%.2f kg", weight)) } else if let note = peripheral.note { words.append("(\(note))") }
        words.append("on \(peripheral.hci)")
        return Event(kind: kind, section: "peripherals", device: json(peripheral), summary: words.joined(separator: "  "))
    }

    static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// One line of `--json` output.
    static func line(_ event: Event, at time: Duration) -> String {
        let seconds = time.inSeconds
        return #"{"device":"# + event.device + #","event":""# + event.kind.rawValue + #"","section":""# + event.section
            + #"","t":"# + String(format: "%.3f", seconds) + "}\n"
    }
}
