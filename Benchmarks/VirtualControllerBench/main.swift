// vc-bench: our BLE host stack over the in-process virtual controller, where no peer is the
// bottleneck. Per round: open the host, connect to a StreamingPeripheral, exchange the MTU,
// discover, subscribe, and take N notifications of S bytes as fast as the link gives them.
// Prints medians (wall time, notifications per second into the subscriber's loop, CPU per
// notification, how many the bearer had to let go); asserts nothing. `taskset -c 0` keeps it on
// one core.
//
//   swift build -c release --product vc-bench && .build/release/vc-bench [--count N] [--size S] [--rounds R]
//
// The last line of a host run is machine-readable, for CI:
//   figure vc.notification-cpu-us <median µs of CPU per notification>

import BLEProtocol
import Foundation
import Glibc
import HAL
import Transports
import Peripherals
import VirtualController

struct Options {
    var count = 200_000
    var size = 20
    var rounds = 3
    /// Read the controller's bytes without a host, to see what the controller alone costs.
    var controllerOnly = false

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--controller-only" {
                options.controllerOnly = true
                continue
            }
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                FileHandle.standardError.write(Data("usage: vc-bench [--count N] [--size S] [--rounds R] [--controller-only]\n".utf8))
                exit(2)
            }
            switch flag {
            case "--count": options.count = value
            case "--size": options.size = value
            case "--rounds": options.rounds = value
            default:
                FileHandle.standardError.write(Data("vc-bench: unknown option \(flag)\n".utf8))
                exit(2)
            }
        }
        return options
    }
}

/// User plus system CPU of the whole process, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

struct Round {
    var setup: Double
    var seconds: Double
    var cpu: Double
    var delivered: Int
    var dropped = 0
}

func round(_ options: Options) async throws -> Round {
    let address = BLEAddress(string: "C2:B0:B0:00:00:0F/random")!
    let controller = VirtualController(peripherals: [StreamingPeripheral(address: address, count: options.count, size: options.size,
                                                                         interval: .milliseconds(20))],
                                       clock: ContinuousClock())
    let clock = ContinuousClock()
    let begin = clock.now
    let central = try await BLECentral.open(stream: controller, uri: .simulatedBench)
    let connection = try await central.connect(address)
    _ = try await connection.bearer.exchangeMTU(247)
    var stream: GATTCharacteristic?
    for tree in try await connection.gatt.discoverAll() { stream = stream ?? tree.characteristics.first { $0.uuid == StreamingPeripheral.stream } }
    guard let stream else { throw BLEError.notFound("the stream characteristic") }
    let setup = begin.duration(to: clock.now)
    var dropped = 0
    let cpuBefore = cpuSeconds()
    let start = clock.now
    let values = try await connection.gatt.subscribe(stream)
    // Timed where a program sees them: the subscriber's loop, until the N-th value or the end.
    var delivered = 0
    for await _ in values {
        delivered += 1
        if delivered == options.count { break }
    }
    let seconds = start.duration(to: clock.now)
    let cpu = cpuSeconds() - cpuBefore
    dropped = connection.bearer.notificationsDropped
    await connection.disconnect()
    await central.close()
    return Round(setup: setup.seconds, seconds: seconds.seconds, cpu: cpu, delivered: delivered, dropped: dropped)
}

/// The controller alone: connect and enable notifications with hand-made HCI, then read its
/// bytes as a host would, without parsing them, until every notification has come out.
func controllerRound(_ options: Options) async throws -> Round {
    let address = BLEAddress(string: "C2:B0:B0:00:00:0F/random")!
    let peripheral = StreamingPeripheral(address: address, count: options.count, size: options.size, interval: .milliseconds(20))
    let controller = VirtualController(peripherals: [peripheral], clock: ContinuousClock())
    let clock = ContinuousClock()
    var incoming = controller.incoming().makeAsyncIterator()
    for command in [HCICommand.reset, .setEventMask(0x3DBF_F807_FFFB_FFFF), .leSetEventMask(0x000F_FFFF),
                    .leCreateConnection(peer: address, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0, minInterval: 0x18,
                                        maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4)] {
        try await controller.write(HCIPacket.command(command).h4Bytes)
    }
    let begin = clock.now
    while controller.connectionHandles.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
    while controller.pendingBytes > 0 { _ = try await incoming.next() }
    let setup = begin.duration(to: clock.now)
    guard let handle = controller.connectionHandles.first else { throw BLEError.notFound("the link") }
    let write = L2CAPFrame(channel: L2CAPFrame.att, payload: ATTPDU.writeRequest(handle: peripheral.valueHandle + 1, value: [1, 0]).encoded)
    let cpuBefore = cpuSeconds()
    let start = clock.now
    try await controller.write(HCIPacket.acl(ACLPacket(handle: handle, boundary: .firstNonFlushable, data: write.encoded)).h4Bytes)
    // Each notification: H4 type, ACL header, L2CAP header, ATT opcode and handle, the value, in 27-byte fragments.
    let pdu = 4 + 3 + options.size
    let perNotification = pdu + ((pdu + 26) / 27) * 5
    var bytes = 0
    while bytes < options.count * perNotification, let chunk = try await incoming.next() { bytes += chunk.count }
    let seconds = start.duration(to: clock.now)
    let cpu = cpuSeconds() - cpuBefore
    await controller.close()
    return Round(setup: setup.seconds, seconds: seconds.seconds, cpu: cpu, delivered: bytes / perNotification)
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
var rounds: [Round] = []
for index in 1...options.rounds {
    do {
        let result = options.controllerOnly ? try await controllerRound(options) : try await round(options)
        rounds.append(result)
        print(String(format: "round %d: setup %.1f ms, %d notifications %@ in %.3f s (%.0f/s), %.2f µs CPU each, %d dropped",
                     index, result.setup * 1000, result.delivered, options.controllerOnly ? "read from the controller" : "into the subscriber", result.seconds, Double(result.delivered) / result.seconds,
                     result.cpu / Double(max(1, result.delivered)) * 1e6, result.dropped))
    } catch {
        print("round \(index) failed: \(error)")
        exit(1)
    }
}
print(String(format: "median: %.0f notifications/s, %.2f µs CPU per notification, %d dropped (%d bytes each, %d per round; setup %.1f ms)",
             median(rounds.map { Double($0.delivered) / $0.seconds }), median(rounds.map { $0.cpu / Double(max(1, $0.delivered)) * 1e6 }),
             Int(median(rounds.map { Double($0.dropped) })), options.size, options.count, median(rounds.map(\.setup)) * 1000))
print("JSON {\"benchmark\":\"vc\",\"notificationsPerSecond\":\(median(rounds.map { Double($0.delivered) / $0.seconds })),"
      + "\"cpuMicrosecondsPerNotification\":\(median(rounds.map { $0.cpu / Double(max(1, $0.delivered)) * 1e6 })),"
      + "\"dropped\":\(median(rounds.map { Double($0.dropped) })),\"count\":\(options.count),\"controllerOnly\":\(options.controllerOnly)}")
// The one line a CI guard parses (the host's figure; the controller-only run is context, not it).
if !options.controllerOnly {
    print("figure vc.notification-cpu-us " + String(format: "%.3f", median(rounds.map { $0.cpu / Double(max(1, $0.delivered)) * 1e6 })))
}
