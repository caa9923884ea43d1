// ble-bench: our BLE host stack against bumble's own host, on the same bumble peer, in one run.
//
// One peer process (Tests/Peers/ble_peer.py) serves both clients, one after the other (its TCP
// server takes one host at a time and power-cycles controller A between hosts). For R rounds each,
// both clients: open a host on the peer's H4 TCP port, connect, exchange the MTU and discover
// everything, subscribe to the notify characteristic and have the peer send N notifications of S
// bytes. Figures are medians over the rounds; nothing is asserted.
//
//   swift build -c release --product ble-bench && .build/release/ble-bench [--count N] [--size S] [--rounds R]
//
// The last line of a successful run is machine-readable, for CI:
//   ratio ble.notification-cpu <our CPU per notification / bumble's host's, medians>
// A short form (`--count 2000 --rounds 1`) takes a few seconds (about 3 s here, unloaded).
//
// scripts/bench-ble does the setup (peer venv, release build) and runs it.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAL
import PeerSupport
import Transports

// MARK: options

struct Options {
    var count = 5000
    var size = 20
    var rounds = 3
    var timeout = 120.0

    static let usage = """
        usage: ble-bench [--count N] [--size S] [--rounds R] [--timeout SECONDS]
          --count    notifications per round (default 5000)
          --size     bytes per notification (default 20; the peer clamps it to MTU-3)
          --rounds   rounds per stack; medians are reported (default 3)
          --timeout  seconds to wait for one round's notifications (default 120)
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) -> String {
            guard let next = rest.popFirst() else { fail("\(flag) needs a value") }
            return next
        }
        func positive(_ flag: String) -> Int {
            let text = value(flag)
            guard let number = Int(text), number > 0 else { fail("\(flag) wants a positive integer, not \(text)") }
            return number
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--count": options.count = positive(flag)
            case "--size": options.size = positive(flag)
            case "--rounds": options.rounds = positive(flag)
            case "--timeout":
                let text = value(flag)
                guard let seconds = Double(text), seconds > 0 else { fail("--timeout wants seconds, not \(text)") }
                options.timeout = seconds
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                fail("unknown argument \(flag)")
            }
        }
        return options
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ble-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}

// MARK: measuring

/// User + system CPU time this process has used so far (all threads).
func processCPUSeconds() -> Double {
    var usage = rusage()
    _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The peer's process id: our child running ble_peer.py (PeerProcess does not expose it).
func findPeerPID() -> Int32? {
    let me = getpid()
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    for entry in entries {
        guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, Int32(fields[1]) == me,
              let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
              String(decoding: command, as: UTF8.self).contains("ble_peer.py") else { continue }
        return pid
    }
    return nil
}

/// User + system CPU seconds another process has used so far (from /proc/PID/stat).
func processCPUSeconds(pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // After the command name: state is field 3, utime field 14 and stime field 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

/// One round's figures; the keys match bench_client.py's JSON.
typealias Figures = [String: Double]

func median(_ rounds: [Figures], _ key: String) -> Double? {
    let values = rounds.compactMap { $0[key] }.sorted()
    guard !values.isEmpty else { return nil }
    let middle = values.count / 2
    return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

let notifyUUID = BluetoothUUID(string: "A5C30006-6B1E-4F2A-9D3C-2B7E5F10C4A9")!

/// Waits until the peer has no connection and no TCP host attached, so the next host starts clean.
func waitUntilPeerIsIdle(_ peer: PeerProcess, timeout: Duration = .seconds(5)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        let state = try await peer.command(["cmd": "state"])
        let connected = state["connected"] as? Bool ?? true
        let tcp = (state["hosts"] as? [String: Any])?["tcp"] as? [String: Any]
        let attached = tcp?["attached"] as? Bool ?? false
        if !connected && !attached { return }
        if clock.now > deadline { throw BenchFailure(description: "the peer did not become idle: \(state)") }
        try await clock.sleep(for: .milliseconds(20))
    }
}

/// What the receive loop saw.
struct Reception: Sendable {
    var received = 0
    var lastSequence: Int64 = -1
    var outOfOrder = 0
}

// MARK: our stack

func ourRound(peer: PeerProcess, peerPID: Int32?, options: Options) async throws -> Figures {
    var figures: Figures = [:]
    let clock = ContinuousClock()

    var started = clock.now
    let central = try await BLECentral.open(peer.tcp)
    figures["openSeconds"] = (clock.now - started).seconds

    do {
        started = clock.now
        let connection = try await central.connect(peer.address)
        figures["connectSeconds"] = (clock.now - started).seconds

        started = clock.now
        let mtu = try await connection.bearer.exchangeMTU(247)
        let trees = try await connection.gatt.discoverAll()
        figures["discoverySeconds"] = (clock.now - started).seconds
        figures["mtu"] = Double(mtu)

        guard let characteristic = trees.lazy.flatMap(\.characteristics).first(where: { $0.uuid == notifyUUID }) else {
            throw BenchFailure(description: "\(notifyUUID) was not discovered")
        }
        let values = try await connection.gatt.subscribe(characteristic)
        let count = options.count
        let before = connection.bearer.notificationsReceived

        let peerCPUBefore = peerPID.flatMap { processCPUSeconds(pid: $0) }
        let cpuBefore = processCPUSeconds()
        let wallBefore = clock.now
        // The peer answers once controller B has taken them all; keep only its two Sendable figures.
        let size = options.size
        let command = Task { () async throws -> (seconds: Double?, perSecond: Double?) in
            let answer = try await peer.command(["cmd": "notify", "count": count, "size": size])
            guard answer["ok"] as? Bool == true else { throw BenchFailure(description: "notify refused: \(answer)") }
            return (answer["seconds"] as? Double, answer["perSecond"] as? Double)
        }
        // Receive until the N-th notification (or the last sequence number, should the stream's
        // buffer have dropped some), or give up at the timeout.
        let reception = await withTaskGroup(of: Reception?.self) { group -> Reception in
            group.addTask {
                var seen = Reception()
                for await value in values {
                    seen.received += 1
                    if value.count >= 4 {
                        let sequence = Int64(value[0]) | Int64(value[1]) << 8 | Int64(value[2]) << 16 | Int64(value[3]) << 24
                        if sequence != seen.lastSequence + 1 { seen.outOfOrder += 1 }
                        seen.lastSequence = sequence
                        if sequence == Int64(count - 1) { break }
                    }
                    if seen.received >= count { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(options.timeout))
                return nil
            }
            var outcome = Reception()
            if let first = await group.next(), let seen = first { outcome = seen }
            group.cancelAll()
            return outcome
        }
        let wall = (clock.now - wallBefore).seconds
        let cpu = processCPUSeconds() - cpuBefore
        let peerCPUAfter = peerPID.flatMap { processCPUSeconds(pid: $0) }
        let answer = try await command.value
        let arrived = connection.bearer.notificationsReceived - before

        let received = Double(reception.received)
        figures["received"] = received
        figures["arrivedAtBearer"] = Double(arrived)
        figures["outOfOrder"] = Double(reception.outOfOrder)
        figures["notifySeconds"] = wall
        figures["notificationsPerSecond"] = wall > 0 ? received / wall : 0
        figures["cpuSeconds"] = cpu
        if reception.received > 0 { figures["cpuMicrosecondsPerNotification"] = cpu / received * 1e6 }
        if let peerCPUBefore, let peerCPUAfter, wall > 0 {
            figures["peerCPUSeconds"] = peerCPUAfter - peerCPUBefore
            figures["peerCPUShare"] = (peerCPUAfter - peerCPUBefore) / wall
        }
        if let seconds = answer.seconds { figures["peerSeconds"] = seconds }
        if let perSecond = answer.perSecond { figures["peerPerSecond"] = perSecond }

        await connection.disconnect()
    } catch {
        await central.close()
        throw error
    }
    await central.close()
    try await waitUntilPeerIsIdle(peer)
    return figures
}

// MARK: bumble's host

func bumbleRun(peer: PeerProcess, peerPID: Int32?, options: Options) throws -> (median: Figures, raw: [Figures]) {
    guard let python = PeerProcess.python else { throw BenchFailure(description: "no .venv-peers: run scripts/setup-peers") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    let address = peer.address.description + (peer.address.kind == .random ? "/random" : "")
    guard case .tcp(let host, let port) = peer.tcp else { throw BenchFailure(description: "the peer's H4 port is not TCP: \(peer.tcp)") }
    process.arguments = [
        PeerProcess.repositoryRoot + "/Tests/Peers/bench_client.py",
        "--tcp", "\(host):\(port)",
        "--control", "\(peer.control.host):\(peer.control.port)",
        "--address", address,
        "--count", String(options.count), "--size", String(options.size), "--rounds", String(options.rounds),
        "--timeout", String(options.timeout),
    ] + (peerPID.map { ["--peer-pid", String($0)] } ?? [])
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure(description: "bench_client.py exited with \(process.terminationStatus)")
    }
    guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }),
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { throw BenchFailure(description: "bench_client.py printed no JSON line") }
    func numbers(_ any: Any?) -> Figures {
        var figures: Figures = [:]
        for (key, value) in (any as? [String: Any]) ?? [:] {
            if let number = value as? Double { figures[key] = number } else if let number = value as? Int { figures[key] = Double(number) }
        }
        return figures
    }
    let raw = ((object["raw"] as? [Any]) ?? []).map(numbers)
    return (numbers(object["median"]), raw)
}

// MARK: report

/// Which direction is better; `context` rows (the peer's own figures) are there to interpret the others.
enum Better { case lower, higher, context }

extension Better {
    var label: String {
        switch self {
        case .lower: "lower"
        case .higher: "higher"
        case .context: "n/a"
        }
    }
}

struct Metric {
    var name: String
    var key: String
    var unit: String
    var scale: Double
    var better: Better
    var digits: Int
}

let metrics = [
    Metric(name: "host open (HCI init)", key: "openSeconds", unit: "ms", scale: 1000, better: .lower, digits: 2),
    Metric(name: "connect", key: "connectSeconds", unit: "ms", scale: 1000, better: .lower, digits: 2),
    Metric(name: "MTU + discovery", key: "discoverySeconds", unit: "ms", scale: 1000, better: .lower, digits: 2),
    Metric(name: "notifications/s", key: "notificationsPerSecond", unit: "/s", scale: 1, better: .higher, digits: 0),
    Metric(name: "CPU per notification", key: "cpuMicrosecondsPerNotification", unit: "µs", scale: 1, better: .lower, digits: 2),
    Metric(name: "CPU for the N", key: "cpuSeconds", unit: "ms", scale: 1000, better: .lower, digits: 1),
    Metric(name: "peer send rate (same run)", key: "peerPerSecond", unit: "/s", scale: 1, better: .context, digits: 0),
    Metric(name: "peer CPU share while sending", key: "peerCPUShare", unit: "%", scale: 100, better: .context, digits: 0),
]

func format(_ value: Double?, _ metric: Metric) -> String {
    guard let value else { return "–" }
    return String(format: "%.\(metric.digits)f %@", value * metric.scale, metric.unit)
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let gap = String(repeating: " ", count: max(0, width - text.count))
    return right ? gap + text : text + gap
}

/// ours/bumble, and a reading of it in the direction that is better for that metric.
func comparison(_ ours: Double?, _ theirs: Double?, _ better: Better) -> (ratio: Double?, reading: String) {
    guard let ours, let theirs, ours > 0, theirs > 0 else { return (nil, "") }
    let ratio = ours / theirs
    switch better {
    case .higher:
        return (ratio, ratio >= 1 ? String(format: "ours %.2f× higher", ratio) : String(format: "ours %.2f× lower", 1 / ratio))
    case .lower:
        return (ratio, ratio <= 1 ? String(format: "ours %.2f× less", 1 / ratio) : String(format: "ours %.2f× more", ratio))
    case .context:
        return (ratio, "(peer side, for context)")
    }
}

func report(options: Options, ours: [Figures], bumble: (median: Figures, raw: [Figures])) {
    let ourMedian = Dictionary(uniqueKeysWithValues: metrics.compactMap { m in median(ours, m.key).map { (m.key, $0) } })
    print("")
    print("BLE host benchmark: our stack vs bumble's host on one bumble peer (virtual controllers over H4/TCP)")
    print("N = \(options.count) notifications of \(options.size) B per round, \(options.rounds) rounds each, medians")
    print("")
    let headers = ["metric", "ours", "bumble", "ours/bumble", "better", "reading"]
    var rows: [[String]] = []
    var json: [String: Any] = [:]
    for metric in metrics {
        let (ratio, reading) = comparison(ourMedian[metric.key], bumble.median[metric.key], metric.better)
        rows.append([metric.name, format(ourMedian[metric.key], metric), format(bumble.median[metric.key], metric),
                     ratio.map { String(format: "%.3f", $0) } ?? "–",
                     metric.better.label, reading])
        json[metric.key] = ["ours": ourMedian[metric.key] as Any, "bumble": bumble.median[metric.key] as Any,
                            "oursOverBumble": ratio as Any, "better": metric.better.label]
    }
    let widths = headers.indices.map { column in ([headers] + rows).map { $0[column].count }.max() ?? 0 }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in pad(cell, widths[index], right: index >= 1 && index <= 3) }
            .joined(separator: "  ")
    }
    print(line(headers))
    print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
    rows.forEach { print(line($0)) }

    // The two headline ratios the issue asks about, with the aims it states (printed, not judged).
    if let ourRate = ourMedian["notificationsPerSecond"], let theirRate = bumble.median["notificationsPerSecond"],
       let ourCPU = ourMedian["cpuMicrosecondsPerNotification"], let theirCPU = bumble.median["cpuMicrosecondsPerNotification"] {
        print("")
        print(String(format: "notification rate: ours %.2f× bumble's (aim: ≥ 3×)", ourRate / theirRate))
        print(String(format: "CPU per notification: ours %.3f× bumble's, i.e. %.2f× %@ (aim: ≤ 0.2×)", ourCPU / theirCPU,
                     ourCPU <= theirCPU ? theirCPU / ourCPU : ourCPU / theirCPU, ourCPU <= theirCPU ? "less" : "more"))
        let closeRates = abs(ourRate / theirRate - 1) < 0.15
        // A client that finishes receiving right after the peer finished sending kept up with it.
        func keptUp(_ figures: Figures?) -> Bool {
            guard let figures, let mine = figures["notifySeconds"], let peers = figures["peerSeconds"], peers > 0 else { return false }
            return mine / peers < 1.05
        }
        let bothKeptUp = (ours.allSatisfy { keptUp($0) } && !ours.isEmpty) && (bumble.raw.allSatisfy { keptUp($0) } && !bumble.raw.isEmpty)
        if let ourShare = ourMedian["peerCPUShare"], let theirShare = bumble.median["peerCPUShare"] {
            print(String(format: "peer CPU while sending: %.0f%% of a core serving ours, %.0f%% serving bumble", ourShare * 100, theirShare * 100))
        }
        if closeRates || bothKeptUp {
            print("note: " + (bothKeptUp ? "both clients kept up with the peer (N-th notification within 5% of the peer's send time)"
                                          : "the two notification rates are close") + ":")
            print("      the peer's notify command sends as fast as bumble's controller B can, so the rate is bounded")
            print("      by the peer (a Python process), not by the client. CPU per notification is the figure")
            print("      that tells the clients apart.")
            if let ourPeer = ourMedian["peerPerSecond"], let theirPeer = bumble.median["peerPerSecond"], abs(ourPeer / theirPeer - 1) > 0.15 {
                print(String(format: "      The peer itself sent %.2f× as fast while serving ours: with few cores the peer competes with", ourPeer / theirPeer))
                print("      the client for CPU, so a client that needs less CPU leaves the peer more.")
            }
        }
        print("the peer, both clients and anything else running share \(ProcessInfo.processInfo.activeProcessorCount) CPU(s); rates move with machine load.")
    }
    print("connect time includes waiting for the peer's next advertisement (interval 100 ms), so it is noisy.")

    print("")
    print("raw rounds (seconds unless named otherwise):")
    func describe(_ figures: Figures) -> String {
        figures.keys.sorted().map { key in
            let value = figures[key]!
            return value == value.rounded() && abs(value) < 1e9 ? "\(key)=\(Int(value))" : String(format: "%@=%.6g", key, value)
        }.joined(separator: " ")
    }
    for (index, figures) in ours.enumerated() { print("  ours   #\(index + 1): \(describe(figures))") }
    for (index, figures) in bumble.raw.enumerated() { print("  bumble #\(index + 1): \(describe(figures))") }

    let machine: [String: Any] = [
        "benchmark": "ble-host", "count": options.count, "size": options.size, "rounds": options.rounds,
        "metrics": json, "ours": ours, "bumble": bumble.raw,
    ]
    if let data = try? JSONSerialization.data(withJSONObject: machine, options: [.sortedKeys]) {
        print("")
        print("JSON " + String(decoding: data, as: UTF8.self))
    }
}

// MARK: main

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let peer: PeerProcess
do {
    peer = try await PeerProcess.start([])
} catch {
    Options.fail("cannot start the bumble peer: \(error)")
}

var exitCode: Int32 = 0
do {
    FileHandle.standardError.write(Data("ble-bench: peer at \(peer.tcp), peripheral \(peer.address)\n".utf8))
    let peerPID = findPeerPID()
    var ours: [Figures] = []
    for index in 0..<options.rounds {
        let figures = try await ourRound(peer: peer, peerPID: peerPID, options: options)
        let rate = figures["notificationsPerSecond"] ?? 0
        let cpu = figures["cpuMicrosecondsPerNotification"] ?? 0
        FileHandle.standardError.write(Data(String(format: "ble-bench: ours round %d: %.0f notifications/s, %.2f µs CPU each\n",
                                                   index + 1, rate, cpu).utf8))
        ours.append(figures)
    }
    let bumble = try bumbleRun(peer: peer, peerPID: peerPID, options: options)
    report(options: options, ours: ours, bumble: bumble)
    // The one line a CI guard parses: our CPU per notification over bumble's host's, medians.
    guard let ourCPU = median(ours, "cpuMicrosecondsPerNotification"), let theirCPU = bumble.median["cpuMicrosecondsPerNotification"],
          ourCPU > 0, theirCPU > 0 else {
        throw BenchFailure(description: "no CPU per notification for one of the stacks (did any notification arrive?)")
    }
    print("ratio ble.notification-cpu " + String(format: "%.4f", ourCPU / theirCPU))
} catch {
    FileHandle.standardError.write(Data("ble-bench: failed: \(error)\n".utf8))
    exitCode = 1
}
peer.stop()
exit(exitCode)
