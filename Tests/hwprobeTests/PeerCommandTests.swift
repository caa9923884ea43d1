import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `hwprobe list` and `hwprobe gatt` against the bumble peer, through our own host stack.
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PeerCommandTests {
    func run(_ arguments: [String]) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console, listSources: .empty).run(arguments)
        return (code, captured.stdout, captured.stderr)
    }

    @Test func listScansThePeerOverTCPAndUART() async throws {
        let peer = try await SharedPeers.shared.peer()
        let pty = try #require(peer.pty)
        for uri in [peer.tcp.description, "uart:\(pty)?baud=1000000&rtscts=1"] {
            let result = await run(["list", "--hci", uri, "--scan-seconds", "1", "--json"])
            #expect(result.code == 0)
            let json = try JSONShape.parse(result.out)
            let found = json["peripherals"]?.array?.first { $0["address"]?.string == peer.address.description }
            let entry = try #require(found, "\(uri): \(result.out)")
            #expect(entry["hci"]?.string == uri)
            #expect(entry["name"]?.string == "hwprobe-peer")
            #expect(entry["rssi"]?.number ?? 0 < 0)
            #expect(entry["services"]?.array?.compactMap(\.string) == ["180F"])
            #expect(entry["driver"] == nil, "no plugin claims the generic peer")
            #expect(entry["reason"] == nil, "a reason only where a driver claims it")
            #expect(entry["addressType"]?.string == "public")
        }
    }

    @Test(arguments: ["tcp", "uart"])
    func gattDumpMatchesThePeersDatabaseExactly(over transport: String) async throws {
        let peer = try await SharedPeers.shared.peer()
        let uri = transport == "tcp" ? peer.tcp.description : "uart:\(try #require(peer.pty))?baud=1000000&rtscts=1"
        let result = await run(["gatt", "--hci", uri, peer.address.description, "--json"])
        #expect(result.code == 0, "\(result.err)")
        let named = try JSONSerialization.jsonObject(with: Data(result.out.utf8))
        // The peer's database has no names (ours adds them where the SIG or our profiles give one):
        // compare the rest, and the names on their own.
        let ours = Self.withoutNames(named) as? NSDictionary
        let names = try JSONShape.parse(result.out)["services"]?.array?.map { $0["name"]?.string }
        #expect(names == ["Generic Access", "Generic Attribute", nil, "Battery"])
        let answer = try await peer.command(["cmd": "database"])
        let theirs = answer["database"] as? [String: Any]
        // The peer reports the MTU of its live connection, which has ended by now: compare the rest.
        let oursWithoutMTU = ours?.mutableCopy() as? NSMutableDictionary
        oursWithoutMTU?.removeObject(forKey: "mtu")
        var theirsWithoutMTU = theirs ?? [:]
        theirsWithoutMTU["mtu"] = nil
        #expect(oursWithoutMTU == NSDictionary(dictionary: theirsWithoutMTU), "ours: \(result.out)")
        #expect((ours?["mtu"] as? Int ?? 0) > 23)
    }

    /// A JSON value with every `"name"` key taken out.
    static func withoutNames(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { $0.key != "name" }.mapValues(withoutNames)
        }
        if let array = value as? [Any] { return array.map(withoutNames) }
        return value
    }

    @Test func aBTSnoopCaptureShowsTheATTTrafficToTshark() async throws {
        let peer = try await SharedPeers.shared.peer()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = await run(["gatt", "--hci", peer.tcp.description, peer.address.description, "--btsnoop", path, "--json"])
        #expect(result.code == 0)
        let capture = try BTSnoopReader.read(path: path)
        #expect(capture.records.count > 20)
        // ACL packets carrying L2CAP channel 4 (ATT): the discovery went through the capture.
        let att = capture.records.filter { $0.packet.count > 9 && $0.packet[0] == 0x02 && $0.packet[7] == 0x04 && $0.packet[8] == 0x00 }
        #expect(att.count > 10)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            print("tshark is not installed: the capture was checked with our own reader only (scripts/test installs tshark)")
            return
        }
        let tshark = Process()
        tshark.executableURL = URL(fileURLWithPath: "/usr/bin/tshark")
        tshark.arguments = ["-r", path, "-Y", "btatt", "-T", "fields", "-e", "btatt.opcode"]
        let pipe = Pipe()
        tshark.standardOutput = pipe
        tshark.standardError = FileHandle.nullDevice
        try tshark.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tshark.waitUntilExit()
        let opcodes = output.split(separator: "\n")
        #expect(tshark.terminationStatus == 0)
        #expect(opcodes.contains("0x10"), "Read By Group Type Request in tshark's view: \(output.prefix(200))")
        #expect(opcodes.contains("0x11"))
        #expect(opcodes.count >= att.count)
    }

    @Test func theUserChannelHereSaysTheKernelHasNoBluetooth() async throws {
        let list = await run(["list", "--hci", "hci:0", "--json"])
        #expect(list.code == 0)
        let problems = try JSONShape.parse(list.out)["problems"]?.array ?? []
        let messages = problems.filter { $0["section"]?.string == "peripherals" }.compactMap { $0["message"]?.string }
        if HCIControllerProbeAvailable.bluetoothInKernel { return }
        #expect(messages == ["hci:0: kernel has no Bluetooth support (AF_BLUETOOTH unavailable: load the bluetooth module)"])
        let gatt = await run(["gatt", "--hci", "hci:0", "AA:BB:CC:DD:EE:FF", "--json"])
        #expect(gatt.code == 3)
        #expect(try JSONShape.parse(gatt.out)["error"]?["kind"]?.string == "noKernelSupport")
    }
}

enum HCIControllerProbeAvailable {
    /// Whether this kernel has Bluetooth at all (the error-path checks only apply without it).
    static var bluetoothInKernel: Bool {
        do { _ = try HCIControllerProbe.controllers(); return true } catch { return error != .noKernelSupport }
    }
}
