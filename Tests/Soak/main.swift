import TestKit
import Foundation
import PeerSupport

// soak [--scans N] [--imports N] [--seed S] [--speed X] [--only FAULT-PREFIX]
// Runs body scans against the bumble mirror peer and imports from generated videos, each with
// one random fault, and checks after every run that it ended in the state defined for that
// fault, within its deadline, leaving no descriptor, thread or flow behind, and that memory
// stays flat. Prints a table of faults × outcomes; exits 1 if any run broke a rule.

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard name.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("usage: soak [--scans N] [--imports N] [--seed S] [--speed X]\n".utf8))
        exit(2)
    }
    options[String(name.dropFirst(2))] = value
}
let scans = Int(options["scans"] ?? "") ?? 200
let imports = Int(options["imports"] ?? "") ?? 50
let seed = UInt64(options["seed"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
let speed = Double(options["speed"] ?? "") ?? 10
print("soak: \(scans) scans at speed \(speed), \(imports) imports, seed \(seed)")

var problems: [String] = []
var memory: [Int] = []

func note(_ run: Int, _ kind: String, _ label: String, _ outcome: String, _ expected: String, _ extra: String) {
    let mark = outcome == expected && extra.isEmpty ? "ok " : "BAD"
    // Unbuffered, so a long soak can be followed as it goes.
    FileHandle.standardOutput.write(Data("\(mark) \(kind) \(run): \(label) → \(outcome)\(outcome == expected ? "" : " (expected \(expected))")\(extra.isEmpty ? "" : " [\(extra)]")\n".utf8))
}

if scans > 0 {
    guard peerAvailable else {
        print("soak: no bumble peer (run scripts/setup-peers first)")
        exit(2)
    }
    let peer = try await PeerProcess.start(["--profile", "mirror", "--speed", String(speed)])
    var soak = ScanSoak(speed: speed, random: SplitMix64(seed: seed))
    var table = OutcomeTable()
    // Warm up once without a fault: thread pools and caches reach their working size.
    _ = try await soak.run(ScanSoak.Fault(label: "warm-up", command: nil, expected: "complete", bound: .seconds(60)),
                           peer: peer, baseline: ProcessResources.now())
    let baseline = ProcessResources.now()
    // Until `scans` runs were really faulted: a fault armed for a moment the mirror never
    // reached (it left that state first) leaves its run unfaulted; such runs are counted apart.
    var faulted = 0, unstruck = 0, number = 0
    while faulted < scans && number < scans * 2 {
        number += 1
        var fault = soak.nextFault()
        // --only PREFIX repeats one kind of fault, to chase a finding.
        while let only = options["only"], !fault.label.hasPrefix(only) { fault = soak.nextFault() }
        let run = try await soak.run(fault, peer: peer, baseline: baseline)
        var extra = run.leftovers
        if run.elapsed > fault.bound { extra.append("took \(run.elapsed), bound \(fault.bound)") }
        if !run.struck {
            unstruck += 1
            note(number, "scan", fault.label + " (never struck)", run.outcome, "complete", extra.joined(separator: "; "))
            if run.outcome != "complete" || !extra.isEmpty { problems.append("scan \(number) \(fault.label) (never struck): \(run.outcome) \(extra)") }
            memory.append(ProcessResources.now().residentKiB)
            continue
        }
        if fault.command != nil { faulted += 1 }
        table.add(fault: fault.label.split(separator: "@").first.map(String.init) ?? fault.label, outcome: run.outcome)
        note(number, "scan", fault.label, run.outcome, fault.expected, extra.joined(separator: "; "))
        if run.outcome != fault.expected || !extra.isEmpty { problems.append("scan \(number) \(fault.label): \(run.outcome) \(extra)") }
        memory.append(ProcessResources.now().residentKiB)
    }
    print("scans: \(number) runs, \(faulted) with a fault that struck, \(unstruck) whose fault never struck, \(number - faulted - unstruck) without a fault")
    peer.stop()
    let end = ProcessResources.now()
    print("threads: \(baseline.threads) after warm-up, \(end.threads) at the end; descriptors: \(baseline.fileDescriptors) → \(end.fileDescriptors)")
    print("\n" + table.render(title: "scan fault"))
}

if imports > 0 {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var soak = ImportSoak(random: SplitMix64(seed: seed ^ 0xA5A5), directory: directory)
    var table = OutcomeTable()
    let warmUp = ImportSoak.Fault(label: "none", expected: "decrypted")
    _ = try await soak.run(warmUp, number: 0, baseline: ProcessResources.now())
    let baseline = ProcessResources.now()
    for number in 1...imports {
        let fault = soak.nextFault()
        let run = try await soak.run(fault, number: number, baseline: baseline)
        table.add(fault: fault.label, outcome: run.outcome)
        note(number, "import", fault.label, run.outcome, fault.expected, run.leftovers.joined(separator: "; "))
        if run.outcome != fault.expected || !run.leftovers.isEmpty { problems.append("import \(number) \(fault.label): \(run.outcome) \(run.leftovers)") }
        memory.append(ProcessResources.now().residentKiB)
    }
    print("\n" + table.render(title: "import fault"))
}

// Memory: the resident size over the last quarter of runs against the second quarter.
if memory.count >= 8 {
    let quarter = memory.count / 4
    let early = memory[quarter..<(2 * quarter)].reduce(0, +) / quarter
    let late = memory[(memory.count - quarter)...].reduce(0, +) / quarter
    print("\nresident memory: \(early / 1024) MiB in the second quarter of runs, \(late / 1024) MiB in the last (Δ \(late - early) KiB)")
    if late - early > 32 * 1024 { problems.append("memory grew by \((late - early) / 1024) MiB") }
}
if problems.isEmpty {
    print("soak: every run ended in its defined state, within its deadline, with nothing left over")
} else {
    print("soak: \(problems.count) problem(s):\n" + problems.map { "  " + $0 }.joined(separator: "\n"))
    exit(1)
}
