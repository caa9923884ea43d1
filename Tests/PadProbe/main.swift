// pad-probe: a test helper (not part of hwprobe) that opens a pad URI with our real drivers and
// plays cues through RumbleScheduler on a sped-up clock, so the umockdev tests in PluginsTests
// can check the exact bytes that reach the emulated device.
//
//   pad-probe URI [--cues all|none|NAME,NAME…] [--speed N] [--detach-kernel-driver]
//                 [--await-input-report] [--unplug-after N]
//
// It prints one line per event (`played CUE`, `failed CUE: message`, `command N`, `commands N`,
// `gone true|false`, `input-report HEX`) and exits 0 when it ran to the end, 1 on bad arguments,
// 2 when the pad could not be opened, 3 when an awaited input report never came.
// `--unplug-after N` prints `unplug` after the N-th command and waits (10 s at most) for a line
// on stdin, so the umockdev wrapper can remove the device at exactly that point.
import DualShock4
import Foundation
import HAL
import Synchronization
import Xbox360Pad

/// Counts the commands that reached the pad and, on request, pauses after one of them.
final class CountingActuator: RumbleActuator {
    let base: any RumbleActuator
    let unplugAfter: Int?
    private let count = Mutex(0)

    init(_ base: any RumbleActuator, unplugAfter: Int?) {
        self.base = base
        self.unplugAfter = unplugAfter
    }

    var name: String { base.name }
    var commands: Int { count.withLock { $0 } }

    func rumble(_ level: RumbleLevel, for duration: Duration) async throws(HapticError) {
        try await base.rumble(level, for: duration)
        await completed()
    }

    func indicate(_ color: IndicatorColor?) async throws(HapticError) {
        try await base.indicate(color)
        await completed()
    }

    func stop() async throws(HapticError) {
        try await base.stop()
        await completed()
    }

    private func completed() async {
        let n = count.withLock { n in
            n += 1
            return n
        }
        say("command \(n)")
        if n == unplugAfter {
            say("unplug")
            await waitForLine(deadline: .seconds(10))
        }
    }
}

/// One line, flushed at once: the umockdev wrapper reacts to lines as they come.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Reads one line from stdin on a thread of its own, giving up after `deadline`.
func waitForLine(deadline: Duration) async {
    let done = Mutex(false)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let finish: @Sendable () -> Void = {
            let first = done.withLock { wasDone in
                defer { wasDone = true }
                return !wasDone
            }
            if first { continuation.resume() }
        }
        Thread { _ = readLine(); finish() }.start()
        Task {
            try? await Task.sleep(for: deadline)
            finish()
        }
    }
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("pad-probe: \(message)\n".utf8))
    exit(code)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let uriText = arguments.first, !uriText.hasPrefix("-") else {
    fail("usage: pad-probe URI [--cues all|none|NAME,…] [--speed N] [--detach-kernel-driver] [--await-input-report] [--unplug-after N]", code: 1)
}
arguments.removeFirst()
var cues = HapticCue.allCases
var speed = 20.0
var detach = false
var awaitInputReport = false
var unplugAfter: Int?
while let option = arguments.first {
    arguments.removeFirst()
    switch option {
    case "--cues":
        guard let list = arguments.first else { fail("--cues needs a value", code: 1) }
        arguments.removeFirst()
        if list == "none" {
            cues = []
        } else if list != "all" {
            cues = list.split(separator: ",").map { name in
                guard let cue = HapticCue(rawValue: String(name)) else { fail("unknown cue \(name)", code: 1) }
                return cue
            }
        }
    case "--speed":
        guard let value = arguments.first.flatMap(Double.init), value > 0 else { fail("--speed needs a positive number", code: 1) }
        arguments.removeFirst()
        speed = value
    case "--unplug-after":
        guard let value = arguments.first.flatMap(Int.init), value > 0 else { fail("--unplug-after needs a positive count", code: 1) }
        arguments.removeFirst()
        unplugAfter = value
    case "--detach-kernel-driver": detach = true
    case "--await-input-report": awaitInputReport = true
    default: fail("unknown option \(option)", code: 1)
    }
}

let uri: DeviceURI
do {
    uri = try DeviceURI(parsing: uriText)
} catch {
    fail("\(error)", code: 1)
}

let actuator: any RumbleActuator
var close: () -> Void = {}
var inputReport: (@Sendable () async throws(HapticError) -> [UInt8]?)?
do throws(HapticError) {
    switch uri {
    case .usb:
        let pad = try Xbox360PadDriver(detachKernelDriver: detach).open(uri)
        actuator = pad
        close = { pad.close() }
    case .hidraw:
        let pad = try DualShock4Driver().open(uri)
        actuator = pad
        close = { pad.close() }
        inputReport = { () throws(HapticError) -> [UInt8]? in
            do {
                return try await pad.device.readInputReport(timeout: .seconds(5))
            } catch {
                throw .io("\(error)")
            }
        }
    default:
        fail("pad-probe opens usb: and hidraw: URIs", code: 1)
    }
} catch {
    say("open failed: \(error)")
    exit(2)
}

let counting = CountingActuator(actuator, unplugAfter: unplugAfter)
let scheduler = RumbleScheduler(counting, clock: ScaledClock(speed: speed))
for cue in cues {
    do {
        try await scheduler.play(cue)
        say("played \(cue)")
    } catch {
        say("failed \(cue): \(error)")
    }
}
say("commands \(counting.commands)")
say("gone \(await scheduler.hasDisappeared)")
if awaitInputReport, let inputReport {
    // The umockdev script answers with an input report only after every expected write matched.
    let report = try? await inputReport()
    guard let report else {
        say("no input report")
        exit(3)
    }
    say("input-report " + report.map { String(format: "%02x", $0) }.joined())
}
close()
say("closed")
