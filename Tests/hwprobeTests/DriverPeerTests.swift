import Flows
import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// The drivers and the flows on real transports: our host stack against bumble peripherals that
/// play a Mi scale and the v1 mirror (the scales' weigh sessions are cassette tests now).
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct DriverPeerTests {
    static let mirrorPeer = ["--profile", "mirror", "--speed", "10"]

    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    // The standard scale's series, the two-packet Body Composition Measurement and the
    // broadcasting Mi scale are DriverCassetteTests now: the same sessions, recorded from these
    // peers (CassettePeerTests records and compares them live on every run).

    @Test func listShowsTheMiScalesWeightAndTheMirrorsDriver() async throws {
        let mi = try await SharedPeers.shared.peer(["--profile", "miscale"])
        _ = try await mi.command(["cmd": "mi_weigh", "kg": 72.35, "impedance": 500])
        let list = await run(["list", "--hci", mi.tcp.description, "--scan-seconds", "1.5", "--json"])
        let entry = try JSONShape.parse(list.out)["peripherals"]?.array?.first { $0["address"]?.string == mi.address.description }
        #expect(entry?["driver"]?.string == "mi-scale")
        #expect(entry?["kind"]?.string == "scale")
        #expect(entry?["weightKg"]?.number != nil)
        let mirror = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let mirrorList = await run(["list", "--hci", mirror.tcp.description, "--scan-seconds", "1", "--json"])
        let mirrorEntry = try JSONShape.parse(mirrorList.out)["peripherals"]?.array?.first { $0["address"]?.string == mirror.address.description }
        #expect(mirrorEntry?["driver"]?.string == "mirror-v1")
        #expect(mirrorEntry?["kind"]?.string == "mirror")
        #expect(mirrorEntry?["name"]?.string == "Mirror 4F2A")
    }

    @Test func scanCompletesAgainstTheMirrorPeer() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await run(["scan", "--hci", peer.tcp.description, "--yes", "--json"])
        #expect(result.code == 0, "\(result.err.suffix(600))")
        let json = try JSONShape.parse(result.out)
        #expect(json["outcome"]?.string == "complete")
        #expect(json["states"]?.array?.compactMap(\.string) == ["connecting", "waitForScale", "preflight", "alignScale", "confirmAlignment",
                                                                  "warmingUp", "phoneDown", "countdown", "scanning", "stepOff",
                                                                  "processing", "complete"])
        #expect(json["result"]?["scanId"]?.number == 40_213)
        #expect(json["result"]?["weightKg"]?.number == 72.35)
        #expect(json["result"]?["bodyFatPercent"]?.number == 18.4)
        #expect(json["result"]?["pointCount"]?.number == 412_388)
    }

    /// A mirror with a random address, named on the command line without its type (as people
    /// copy addresses from a list or a label): it must be found, not missed as a public one.
    @Test func scanFindsARandomAddressMirrorNamedWithoutItsType() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer + ["--random"])
        #expect(peer.address.kind == .random)
        let result = await run(["scan", "--hci", peer.tcp.description, "--mirror", peer.address.description, "--yes", "--json"])
        #expect(result.code == 0, "\(result.err.suffix(600))")
        #expect(try JSONShape.parse(result.out)["outcome"]?.string == "complete")
    }

    struct Fault: Sendable, CustomTestStringConvertible {
        var command: [String: String]
        var reason: String
        var code: Int?
        var testDescription: String { command.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
    }

    static let faults: [Fault] = [
        Fault(command: ["fault": "disconnect", "state": "warmingUp", "after_ms": "100"], reason: "disconnected"),
        Fault(command: ["fault": "disconnect", "state": "scanning", "after_ms": "100"], reason: "disconnected"),
        Fault(command: ["fault": "error", "code": "1", "state": "scanning", "after_ms": "100"], reason: "mirrorError", code: 1),
        Fault(command: ["fault": "error", "code": "3", "state": "ready", "after_ms": "50"], reason: "mirrorError", code: 3),
        Fault(command: ["fault": "error", "code": "2", "state": "ready", "after_ms": "50"], reason: "mirrorError", code: 2),
        Fault(command: ["fault": "error", "code": "5", "state": "ready", "after_ms": "50"], reason: "mirrorError", code: 5),
        Fault(command: ["fault": "error", "code": "6", "state": "ready", "after_ms": "50"], reason: "mirrorError", code: 6),
        Fault(command: ["fault": "error", "code": "255", "state": "ready", "after_ms": "50"], reason: "mirrorError", code: 255),
        Fault(command: ["fault": "step_off_early", "progress": "40"], reason: "mirrorError", code: 4),
        Fault(command: ["battery": "8"], reason: "preflight"),
    ]

    @Test(arguments: faults)
    func eachFaultEndsTheScanWithItsReasonAndExitOne(_ fault: Fault) async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        var command: [String: Any] = ["cmd": "mirror_fault"]
        for (key, value) in fault.command { command[key] = Int(value) ?? value }
        _ = try await peer.command(command)
        let result = await run(["scan", "--hci", peer.tcp.description, "--yes", "--json"])
        #expect(result.code == 1, "\(result.out)")
        let json = try JSONShape.parse(result.out)
        #expect(json["outcome"]?.string == "failed")
        #expect(json["states"]?.array?.last?.string == "failed")
        #expect(json["failure"]?["reason"]?.string == fault.reason)
        if let code = fault.code { #expect(json["failure"]?["code"]?.number == Double(code)) }
        _ = try await peer.command(["cmd": "mirror_fault", "fault": "clear"])
        // The fault fired once: a retry reconnects and completes (checked for the first two kinds).
        if fault.testDescription == Self.faults[0].testDescription || fault.testDescription == Self.faults[2].testDescription {
            let retry = await run(["scan", "--hci", peer.tcp.description, "--yes", "--json"])
            #expect(retry.code == 0, "retry: \(retry.out)")
        }
    }

    @Test func aMirrorThatFallsSilentMeetsOurDeadline() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        _ = try await peer.command(["cmd": "mirror_fault", "fault": "silence", "state": "scanning"])
        let central = try await BLECentral.open(peer.tcp)
        var configuration = BodyScanConfiguration(recognizingMirrorsWith: DriverRegistry.linked)
        configuration.autoAnswer = true
        configuration.deadlines.scanning = Deadline(warning: .milliseconds(300), failure: .milliseconds(800))
        let flow = BodyScanFlow(transport: BLEScaleTransport(central: central, registry: DriverRegistry.linked),
                                clock: ContinuousClock(), configuration: configuration)
        let outcome = await flow.run()
        flow.close()
        await central.close()
        #expect(outcome.failure?.reason == .timedOut)
        #expect(outcome.failure?.state == .scanning)
    }

    @Test func aScanTokenBeforeInitIsRefusedWithTheProfilesError() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let central = try await BLECentral.open(peer.tcp)
        let transport = BLEScaleTransport(central: central, registry: DriverRegistry.linked)
        var found: DiscoveredDevice?
        for try await device in transport.discover() where device.address.bytes == peer.address.bytes && device.name != nil {
            found = device
            break
        }
        let mirror = try await transport.connect(to: try #require(found))
        let token = [UInt8](repeating: 7, count: 16)
        await #expect(throws: ScaleError.refused(.scanToken(token), .notInitialized)) { try await mirror.send(.scanToken(token)) }
        await #expect(throws: ScaleError.refused(.startScan, .notReady)) { try await mirror.send(.startScan) }
        #expect(try await mirror.readInfo().protocolVersion == 1)
        await mirror.disconnect()
        await central.close()
    }
}
