import HAL
import Transports
import MirrorV1

/// The `mirror-v1` checks that need more than one look: the advertising forms and advertising
/// while connected, notifications before the CCCD is written, Write Commands, confirming an
/// unaligned scale, a whole scan (observed once, judged by several checks), and a client that
/// disconnects mid-scan.
extension MirrorChecks {
    // MARK: Advertising, heard again

    /// The AD types a report carries, in order, up to the first structure that does not fit.
    static func adTypes(_ data: [UInt8]) -> [UInt8] {
        var types: [UInt8] = [], index = 0
        while index < data.count {
            let length = Int(data[index])
            guard length > 0, index + length < data.count else { break }
            types.append(data[index + 1])
            index += length + 1
        }
        return types
    }

    static let flagsType: UInt8 = 0x01, uuids128Type: UInt8 = 0x07, nameType: UInt8 = 0x09, manufacturerType: UInt8 = 0xFF

    static func adNames(_ types: [UInt8]) -> String {
        let names: [UInt8: String] = [flagsType: "Flags", uuids128Type: "128-bit UUIDs", nameType: "Complete Local Name",
                                      manufacturerType: "Manufacturer Data", 0x06: "incomplete 128-bit UUIDs", 0x08: "Shortened Local Name"]
        return types.isEmpty ? "nothing" : types.map { names[$0] ?? String(format: "type 0x%02X", $0) }.joined(separator: ", ")
    }

    /// How long a check listens for the mirror's advertising (a real mirror may advertise only
    /// every second or so).
    static let listen: Duration = .seconds(3)

    static let advertisingForms: [ConformanceCheck] = [
        ConformanceCheck(id: "adv.form", title: "one connectable extended advertisement with all four fields, or a legacy advertisement "
                         + "with Flags and the service UUIDs and a scan response with the manufacturer data and the name") { s throws(CheckFinding) in
            await s.disconnect()
            let reports = try await s.advertisingReports(within: listen) { heard in
                heard.contains { !$0.isLegacy && !$0.isScanResponse } || (heard.contains { $0.isLegacy && !$0.isScanResponse } && heard.contains { $0.isLegacy && $0.isScanResponse })
            }
            guard !reports.isEmpty else { throw .fail(expected: "the mirror heard advertising within \(CheckText.seconds(listen)) of the client leaving", seen: "nothing") }
            // Where each field goes; a field missing altogether is its own check's finding.
            let present = Set(reports.flatMap { adTypes($0.data) })
            // Extended scan responses are left out: a connectable extended advertisement is not
            // scannable (bumble's controller reports one anyway, a copy of the advertisement).
            let extended = reports.filter { !$0.isLegacy && !$0.isScanResponse }
            if !extended.isEmpty {
                guard extended.contains(where: \.connectable) else {
                    throw .fail(expected: "a connectable extended advertisement", seen: "only non-connectable ones")
                }
                let together = Set(extended.flatMap { adTypes($0.data) })
                let wanted = present.intersection([flagsType, uuids128Type, manufacturerType, nameType])
                guard together.isSuperset(of: wanted) else {
                    throw .fail(expected: "\(adNames(wanted.sorted())) in the extended advertisement itself", seen: adNames(together.sorted()))
                }
                return
            }
            guard let advertisement = reports.first(where: { $0.isLegacy && !$0.isScanResponse }) else {
                throw .fail(expected: "a legacy advertisement", seen: "only scan responses")
            }
            let primary = adTypes(advertisement.data)
            let first = present.intersection([flagsType, uuids128Type])
            guard Set(primary).isSuperset(of: first) else {
                throw .fail(expected: "\(adNames(first.sorted())) in the legacy advertisement itself (the rest in the scan response)",
                            seen: "\(adNames(primary)) in the advertisement, \(adNames(reports.first { $0.isLegacy && $0.isScanResponse }.map { adTypes($0.data) } ?? [])) in the scan response")
            }
        },
        ConformanceCheck(id: "adv.only-while-disconnected", title: "advertises only while no central is connected: silent while connected, heard again after",
                         deadline: .seconds(15)) { s throws(CheckFinding) in
            _ = try await s.connection()
            let during = try await s.advertisingReports(within: listen) { !$0.isEmpty }
            if let heard = during.first {
                throw .fail(expected: "no advertising from the mirror while a central is connected to it",
                            seen: "\(heard.isScanResponse ? "a scan response" : "an advertisement") (\(adNames(adTypes(heard.data))))")
            }
            await s.disconnect()
            guard !(try await s.advertisingReports(within: listen) { !$0.isEmpty }).isEmpty else {
                throw .fail(expected: "advertising again within \(CheckText.seconds(listen)) of the client disconnecting", seen: "nothing")
            }
        },
    ]

    // MARK: Notifications

    static let notifications: [ConformanceCheck] = [
        ConformanceCheck(id: "notify.only-after-cccd", title: "nothing is notified before the client writes 01 00 to a CCCD",
                         deadline: .seconds(15)) { s throws(CheckFinding) in
            // A fresh connection: the scale switching on and the alignment changing are what a
            // mirror would notify if it did not wait for the CCCD.
            _ = try await s.reconnect()
            let tree = try await s.database().first { $0.service.uuid == service }
            var names: [UInt16: String] = [:]
            for entry in table {
                if let found = tree?.characteristics.first(where: { $0.uuid == MirrorGATT.uuid(entry.id) }) { names[found.valueHandle] = entry.name }
            }
            let all = try await s.allNotifications(), mirror = Set(names.keys)
            if let stray = await s.next(all, within: listen, where: { mirror.contains($0.handle) }) {
                throw .fail(expected: "no notification before any CCCD is written",
                            seen: "`\(names[stray.handle] ?? "handle \(stray.handle)")` notified \(CheckText.hex(stray.value)) within \(CheckText.seconds(listen)) of connecting")
            }
        },
    ]

    // MARK: More writes

    static let moreWrites: [ConformanceCheck] = [
        ConformanceCheck(id: "write.token-length", title: "a `scanToken` that is not 16 bytes is refused with 0x0D") { s throws(CheckFinding) in
            // After `init`, so that only the length can be wrong.
            guard try await s.write(try await characteristic("init", s), initValue) == nil else { throw .skip("needs `init` accepted") }
            let short = Array(token.prefix(15))
            let answer = try await s.write(try await characteristic("scanToken", s), short)
            try await abort(s)
            guard answer?.code == 0x0D else {
                throw .fail(expected: "ATT error 0x0D for a 15-byte `scanToken`", seen: answer.map(\.description) ?? "the write accepted")
            }
        },
        ConformanceCheck(id: "write.command-ignored", title: "a Write Command (without response) to `scanToken` is ignored") { s throws(CheckFinding) in
            let updates = try await s.subscribe(try await characteristic("scanState", s))
            guard try await s.write(try await characteristic("init", s), initValue) == nil else { throw .skip("needs `init` accepted") }
            try await s.writeCommand(try await characteristic("scanToken", s), token)
            let moved = await s.next(updates, within: .seconds(2)) { $0.first != 0 }
            let now = try await readValue("scanState", s)
            try await abort(s)
            if let moved { throw .fail(expected: "the Write Command ignored (still idle)", seen: "`scanState` notified state \(moved.first ?? 0)") }
            guard now.first == 0 else { throw .fail(expected: "the Write Command ignored (still idle)", seen: "state \(now.first ?? 0)") }
        },
        ConformanceCheck(id: "write.confirm-not-aligned", title: "confirm alignment while not aligned is refused with 0x80") { s throws(CheckFinding) in
            // Just after connecting the person has not yet turned the scale into place.
            _ = try await s.reconnect()
            let alignment = try await readValue("alignment", s)
            guard alignment.count == 3, alignment[2] & 0x01 == 0 else { throw .skip("the scale was already aligned on connecting; nothing to refuse") }
            let answer = try await s.write(try await characteristic("control", s), [0x01])
            guard answer?.code == 0x80 else {
                throw .fail(expected: "ATT error 0x80 for confirm alignment at \(Int8(bitPattern: alignment[0]))° and \(alignment[1]) cm",
                            seen: answer.map(\.description) ?? "the write accepted")
            }
        },
    ]

    // MARK: A whole scan

    /// What a whole scan showed, for the `scan.*` checks to judge.
    struct ScanRecord: Sendable {
        struct State: Sendable { var t: Duration; var value: [UInt8]; var state: UInt8 { value.first ?? 0xFF } }
        struct Scale: Sendable { var t: Duration; var flags: UInt8 }
        var states: [State] = []
        var scale: [Scale] = []
        /// Why the scan stopped short: what it waited for, and for how long.
        var stopped: (waitedFor: String, limit: Duration)?
        /// The mirror's error state, if it went there.
        var error: [UInt8]?
        var result: Result<[UInt8], ATTCode>?
        var afterAbort: [UInt8]?

        var seen: [UInt8] { states.map(\.state) }
        func saw(_ state: UInt8) -> Bool { seen.contains(state) }
        var scaleFlags: UInt8? { scale.last?.flags }
    }

    static let scanKey = "mirror.scan"

    /// The waits of a scan, each with the deadline a client gives it (the profile's failure
    /// values), and the 5 s in which writing `scanToken` must bring `warmingUp`.
    enum Phase: Sendable {
        case scalePresent, aligned, warmingUp, ready, onScale, progress, stepOff, processing

        var limit: Duration {
            switch self {
            case .scalePresent: .seconds(60)
            case .aligned, .processing: .seconds(120)
            case .warmingUp: .seconds(5)
            case .ready, .progress, .stepOff: .seconds(30)
            case .onScale: .seconds(90)
            }
        }
    }

    /// Runs a scan as a client does — subscribe to `scanState`, `scale` and `alignment`, wait for
    /// the scale and the alignment, confirm, `init`, `scanToken`, wait for ready and someone
    /// stable on the scale, start, then follow the mirror through stepOff and processing to
    /// complete, read `result` and abort — recording every notification with its time. Refusals
    /// of the client's writes fail the check that runs it; what the mirror did is judged after.
    static func runScan(_ s: CheckSession) async throws(CheckFinding) -> ScanRecord {
        _ = try await s.reconnect()
        var handles: [String: UInt16] = [:]
        let all = try await s.allNotifications()
        for name in ["scanState", "scale", "alignment"] {
            let found = try await notifying(name, s)
            handles[name] = found.valueHandle
            try await s.enableNotifications(found)
        }
        let record = Locked(ScanRecord())
        let stateHandle = handles["scanState"] ?? 0, scaleHandle = handles["scale"] ?? 0, alignmentHandle = handles["alignment"] ?? 0
        let aligned = Locked<Bool>(false)
        let initial = try await readValue("scale", s)
        record.withLock { $0.scale.append(.init(t: s.elapsed(), flags: initial.first ?? 0)) }
        let alignmentNow = try await readValue("alignment", s)
        aligned.withLock { $0 = alignmentNow.count == 3 && alignmentNow[2] & 0x01 != 0 }

        /// Consumes notifications, recording each, until `done` holds (checked first): true; or
        /// until the mirror goes to `error` or the phase's deadline passes: false.
        func wait(_ what: String, _ phase: Phase, _ done: @escaping @Sendable (ScanRecord, Bool) -> Bool) async -> Bool {
            let limit = phase.limit, start = s.elapsed()
            while true {
                let (current, isAligned) = (record.withLock { $0 }, aligned.withLock { $0 })
                if current.error != nil { return false }
                if done(current, isAligned) { return true }
                let left = limit - (s.elapsed() - start)
                guard left > .zero, let note = await s.next(all, within: left) else {
                    record.withLock { $0.stopped = (what, limit) }
                    return false
                }
                let t = s.elapsed()
                record.withLock { r in
                    switch note.handle {
                    case stateHandle:
                        r.states.append(.init(t: t, value: note.value))
                        if note.value.first == 7 { r.error = note.value }
                    case scaleHandle: r.scale.append(.init(t: t, flags: note.value.first ?? 0))
                    default: break
                    }
                }
                if note.handle == alignmentHandle, note.value.count == 3 { aligned.withLock { $0 = note.value[2] & 0x01 != 0 } }
            }
        }

        func write(_ name: String, _ value: [UInt8]) async throws(CheckFinding) {
            if let refused = try await s.write(try await characteristic(name, s), value) {
                try await abort(s)
                throw .fail(expected: "`\(name)` ← \(CheckText.hex(value)) accepted during a scan", seen: "\(refused)")
            }
        }

        /// Follows the mirror from start scan to complete; false when it stopped short.
        func follow() async -> Bool {
            let occupied: UInt8 = 0x02
            guard await wait("scanning (3) notified after start scan", .progress, { r, _ in r.saw(3) }) else { return false }
            // Progress until the mirror leaves scanning, each notification within the deadline.
            while record.withLock({ $0.states.last?.state }) == 3 {
                let count = record.withLock { $0.states.count }
                guard await wait("a progress notification or the next state", .progress, { r, _ in r.states.count > count }) else { return false }
            }
            guard await wait("the scale reporting not occupied after stepOff", .stepOff, { r, _ in (r.scaleFlags ?? 0) & occupied == 0 }),
                  await wait("processing (5) notified after the person stepped off", .stepOff, { r, _ in r.saw(5) }),
                  await wait("complete (6) notified", .processing, { r, _ in r.saw(6) }) else { return false }
            return true
        }

        guard await wait("the scale present (`scale` flag bit 0)", .scalePresent, { r, _ in (r.scaleFlags ?? 0) & 0x01 != 0 }),
              await wait("`alignment` aligned", .aligned, { _, isAligned in isAligned }) else {
            try await abort(s)
            return record.withLock { $0 }
        }
        try await write("control", [0x01])
        try await write("init", initValue)
        try await write("scanToken", token)
        guard await wait("warmingUp (1) notified after `scanToken`", .warmingUp, { r, _ in r.saw(1) }),
              await wait("ready (2) notified", .ready, { r, _ in r.saw(2) }),
              await wait("someone on the scale, stable", .onScale, { r, _ in (r.scaleFlags ?? 0) & 0x06 == 0x06 }) else {
            try await abort(s)
            return record.withLock { $0 }
        }
        try await write("control", [0x02])
        var done = record.withLock { $0 }
        if await follow() {
            done = record.withLock { $0 }
            done.result = try await s.read(try await characteristic("result", s))
            try await abort(s)
            done.afterAbort = try await readValue("scanState", s)
        } else {
            done = record.withLock { $0 }
            try await abort(s)
        }
        return done
    }

    /// A characteristic the scan needs notifications of: one declared without notify or without a
    /// CCCD skips the check (its `gatt.` check fails for that).
    static func notifying(_ name: String, _ s: CheckSession) async throws(CheckFinding) -> GATTCharacteristic {
        let found = try await characteristic(name, s)
        guard found.properties.contains(.notify), found.descriptors.contains(where: { $0.uuid == GATTCharacteristic.clientConfiguration }) else {
            throw .skip("needs `\(name)` to notify through a CCCD")
        }
        return found
    }

    /// The recorded scan, running it first if no check has yet.
    static func scanRecord(_ s: CheckSession) async throws(CheckFinding) -> ScanRecord {
        if let record = s.recalled(scanKey, as: ScanRecord.self) { return record }
        let record = try await runScan(s)
        s.remember(record, as: scanKey)
        return record
    }

    static let stateNames = ["idle", "warmingUp", "ready", "scanning", "stepOff", "processing", "complete", "error"]

    static func stateName(_ state: UInt8) -> String { Int(state) < stateNames.count ? "\(stateNames[Int(state)]) (\(state))" : "state \(state)" }

    /// A whole scan: the longest check, run once; the others judge its record.
    static let scanDeadline: Duration = .seconds(600)

    static let scan: [ConformanceCheck] = [
        ConformanceCheck(id: "scan.order", title: "a whole scan notifies warmingUp, ready, scanning, stepOff, processing, complete, in that order",
                         deadline: scanDeadline) { s throws(CheckFinding) in
            let record = try await scanRecord(s)
            var order: [UInt8] = []
            for state in record.seen where state != order.last { order.append(state) }
            let expected: [UInt8] = [1, 2, 3, 4, 5, 6]
            let seen = order.map(stateName).joined(separator: " → ")
            if let error = record.error {
                let code = error.count > 2 ? error[2] : 0
                // Under 10 % (not on mains) a scan must end in error 6: that is the profile kept.
                if code == 6, let info = try? await readValue("deviceInfo", s), info.count == 5, info[4] < 10 {
                    throw .skip("the battery is at \(info[4]) %, so the mirror rightly refused to scan (error 6)")
                }
                throw .fail(expected: "a whole scan", seen: "error code \(code) after \(seen)")
            }
            // As far as the scan got (a phase past its deadline is `scan.deadlines`' finding).
            if order.isEmpty, let stop = record.stopped { throw .skip("the scan never started: it waited for \(stop.waitedFor)") }
            guard order == Array(expected.prefix(order.count)), record.stopped != nil || order == expected else {
                throw .fail(expected: expected.map(stateName).joined(separator: " → "), seen: seen.isEmpty ? "no state notified" : seen)
            }
        },
        ConformanceCheck(id: "scan.deadlines", title: "each phase within a client's deadline: warm-up 30 s, 30 s between progress notifications, "
                         + "stepping off 30 s, processing 120 s") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            if let stop = record.stopped {
                throw .fail(expected: "\(stop.waitedFor) within \(CheckText.seconds(stop.limit))", seen: "none after \(CheckText.seconds(stop.limit))")
            }
        },
        // Not "reaches 100": the bench's mirror moves on at 100 without notifying it (the state
        // change says it), and the text ("at 100 % it goes to stepOff") allows that reading.
        ConformanceCheck(id: "scan.progress", title: "progress never falls in scanning or in processing, and is 0 in every other state") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            var last: (state: UInt8, progress: UInt8)?
            for entry in record.states where entry.value.count == 3 {
                let (state, progress) = (entry.value[0], entry.value[1])
                if state == 3 || state == 5 {
                    if let last, last.state == state, progress < last.progress {
                        throw .fail(expected: "progress never falling in \(stateName(state))", seen: "\(last.progress) then \(progress)")
                    }
                } else {
                    guard progress == 0 else { throw .fail(expected: "progress 0 in \(stateName(state))", seen: "\(progress)") }
                }
                last = (state, progress)
            }
        },
        ConformanceCheck(id: "scan.step-off", title: "stepOff lasts until the scale reports not occupied; only then processing") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            guard let stepOff = record.states.first(where: { $0.state == 4 }), let processing = record.states.first(where: { $0.state == 5 }) else {
                throw .skip("needs a scan that reached stepOff and processing")
            }
            let left = record.scale.first { $0.t >= stepOff.t && $0.flags & 0x02 == 0 }
            guard let left, left.t <= processing.t else {
                throw .fail(expected: "processing only after `scale` reports not occupied", seen: "processing while the scale still reported someone on it")
            }
        },
        ConformanceCheck(id: "scan.scale-rate", title: "`scale` notifies about 5 times a second while occupied") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            guard let on = record.scale.firstIndex(where: { $0.flags & 0x02 != 0 }) else { throw .skip("needs someone on the scale during the scan") }
            let off = record.scale[on...].firstIndex { $0.flags & 0x02 == 0 } ?? record.scale.endIndex
            // From stepping on to stepping off (or the end of the record), whatever was notified between.
            let end = off < record.scale.endIndex ? record.scale[off].t : max(record.scale[off - 1].t, record.states.last?.t ?? .zero)
            let span = end - record.scale[on].t
            // Half a second is enough to tell 5 a second from none (a sped-up peer's whole spell).
            guard span >= .milliseconds(500) else { throw .skip("the scale was occupied for under 0.5 s") }
            let perSecond = Double(off - on) / span.inSeconds
            guard perSecond >= 2.5 else {
                throw .fail(expected: "about 5 `scale` notifications a second while occupied",
                            seen: String(format: "%.1f a second over ", perSecond) + CheckText.seconds(span))
            }
        },
        ConformanceCheck(id: "scan.result", title: "`result` readable after complete: 12 bytes, body fat at most 100.0 %") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            guard let result = record.result else { throw .skip("needs a complete scan") }
            switch result {
            case .failure(let code): throw .fail(expected: "`result` readable in complete", seen: "\(code)")
            case .success(let value):
                guard value.count == 12 else { throw .fail(expected: "12 bytes (scan id u32, weight u16, body fat u16, points u32)", seen: "\(value.count): \(CheckText.hex(value))") }
                let fat = UInt16(value[6]) | UInt16(value[7]) << 8
                guard fat <= 1000 else { throw .fail(expected: "body fat at most 1000 (100.0 %)", seen: "\(fat)") }
            }
        },
        ConformanceCheck(id: "scan.abort-complete", title: "abort from complete returns to idle") { s throws(CheckFinding) in
            let record = try await recordedScan(s)
            guard let after = record.afterAbort else { throw .skip("needs a complete scan") }
            guard after.first == 0 else { throw .fail(expected: "state 0 (idle) after abort", seen: stateName(after.first ?? 0xFF)) }
        },
    ]

    /// The scan `scan.order` ran; a check judging it is skipped when it did not run.
    static func recordedScan(_ s: CheckSession) async throws(CheckFinding) -> ScanRecord {
        guard let record = s.recalled(scanKey, as: ScanRecord.self) else { throw .skip("needs the scan `scan.order` runs") }
        return record
    }

    // MARK: Disconnecting mid-scan

    static let midScan: [ConformanceCheck] = [
        ConformanceCheck(id: "state.disconnect-mid-scan", title: "a client that disconnects while scanning finds the mirror idle, progress 0, on reconnecting",
                         deadline: .seconds(180)) { s throws(CheckFinding) in
            _ = try await s.reconnect()
            let scanState = try await notifying("scanState", s), scale = try await notifying("scale", s)
            let states = try await s.subscribe(scanState)
            let weights = try await s.subscribe(scale)
            try await warmUp(s)
            let flags = try await readValue("scale", s).first ?? 0
            if flags & 0x06 != 0x06 {
                guard await s.next(weights, within: Phase.onScale.limit, where: { ($0.first ?? 0) & 0x06 == 0x06 }) != nil else {
                    try await abort(s)
                    throw .skip("needs someone stable on the scale within \(CheckText.seconds(Phase.onScale.limit))")
                }
            }
            if let refused = try await s.write(try await characteristic("control", s), [0x02]) {
                try await abort(s)
                throw .fail(expected: "start scan accepted in ready", seen: "\(refused)")
            }
            guard await s.next(states, within: .seconds(5), where: { $0.first == 3 }) != nil else {
                try await abort(s)
                throw .skip("needs the scan started (no scanning notification within 5 s)")
            }
            _ = try await s.reconnect()
            let value = try await readValue("scanState", s)
            guard value.count == 3, value[0] == 0, value[1] == 0 else {
                throw .fail(expected: "idle (0), progress 0 after reconnecting", seen: value.count == 3 ? "\(stateName(value[0])), progress \(value[1]), error \(value[2])" : CheckText.hex(value))
            }
        },
    ]
}
