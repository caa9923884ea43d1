import Foundation
import HAL
import PeerSupport
import Synchronization
import Testing
import Transports
@testable import hwprobe
import MirrorV1

/// `hwprobe gatt` reading, writing and subscribing against bumble peers, through our own host
/// stack: the generic profile (values, writes it logs, notifications and indications on command)
/// and the v1 mirror (names, a read it refuses, writes it answers with ATT errors).
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct GattPeerTests {
    static let mirrorPeer = DriverPeerTests.mirrorPeer

    /// The generic profile's `A5C300xx-6B1E-4F2A-9D3C-2B7E5F10C4A9` (Tests/Peers/README.md).
    static func generic(_ id: UInt8) -> String { String(format: "A5C300%02X-6B1E-4F2A-9D3C-2B7E5F10C4A9", id) }
    static func mirror(_ id: UInt8) -> String { MirrorGATT.uuid(id).description }

    func run(_ arguments: [String]) async -> TimedRun { await TimedRun.run(arguments) }

    func gatt(_ peer: PeerProcess, _ arguments: [String]) async -> TimedRun {
        await run(["gatt", "--hci", peer.tcp.description, peer.address.description + "/public"] + arguments)
    }

    func characteristic(_ json: [String: JSONShape], _ uuid: String) -> JSONShape? {
        json["services"]?.array?.lazy.compactMap { $0["characteristics"]?.array }.joined().first { $0["uuid"]?.string == uuid }
    }

    // MARK: reads

    @Test func readGivesTheExactBytesOfEachCharacteristicAskedFor() async throws {
        let peer = try await SharedPeers.shared.peer()
        let result = await gatt(peer, ["--read", Self.generic(0x02), "--read", Self.generic(0x03), "--json"])
        #expect(result.code == 0, "\(result.err)")
        let json = try JSONShape.parse(result.out)
        #expect(characteristic(json, Self.generic(0x02))?["value"]?.string == HexValue.text(Array("hwprobe".utf8)))
        // 300 bytes, more than one ATT PDU holds: Read Blob follows until the end.
        let long = (0..<300).map { UInt8((7 * $0 + 3) & 0xFF) }
        #expect(characteristic(json, Self.generic(0x03))?["value"]?.string == HexValue.text(long))
        #expect(characteristic(json, Self.generic(0x08))?["value"] == nil, "only what was asked is read")
        #expect(characteristic(json, "2A19")?["value"] == nil)
    }

    @Test func readByValueHandleInTextShowsTheValueUnderItsCharacteristic() async throws {
        let peer = try await SharedPeers.shared.peer()
        let database = try await peer.command(["cmd": "database"])["database"] as? [String: Any]
        let services = try #require(database?["services"] as? [[String: Any]])
        let battery = try #require(services.first { $0["uuid"] as? String == "180F" }?["characteristics"] as? [[String: Any]])
        let handle = try #require(battery.first?["handle"] as? Int)
        let result = await gatt(peer, ["--read", String(format: "0x%04X", handle)])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("service 180F Battery  handles "))
        #expect(result.out.contains("  characteristic 2A19 Battery Level  handle \(handle)  read,notify\n    value 57\n"), "\(result.out)")
    }

    @Test func readAllOverTheMirrorNamesEverythingAndNotesTheRefusedRead() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await gatt(peer, ["--read", "all", "--json"])
        #expect(result.code == 0, "a refused read under --read all is not a failure: \(result.err)")
        let json = try JSONShape.parse(result.out)
        let services = try #require(json["services"]?.array)
        #expect(services.map { $0["name"]?.string } == ["Generic Access", "Generic Attribute", "Body-scan Mirror"])
        let mirror = try #require(services.last?["characteristics"]?.array)
        #expect(mirror.map { $0["name"]?.string } == ["deviceInfo", "init", "scanToken", "scanState", "scale", "alignment", "control", "result"])
        // deviceInfo: protocol 1, firmware 1.4.2, battery 76 %.
        #expect(characteristic(json, Self.mirror(0x02))?["value"]?.string == "010104024c")
        #expect(characteristic(json, Self.mirror(0x05))?["value"]?.string == "000000", "idle, no progress, no error")
        // result before a scan is complete: the mirror refuses, and the dump goes on.
        let refused = try #require(characteristic(json, Self.mirror(0x09)))
        #expect(refused["error"]?.string == "0x02 Read Not Permitted")
        #expect(refused["value"] == nil)
        #expect(characteristic(json, "2A00")?["value"]?.string == HexValue.text(Array("Mirror 4F2A".utf8)))
        #expect(characteristic(json, "2A00")?["name"]?.string == "Device Name")
        for writeOnly in [0x03, 0x04, 0x08] as [UInt8] {
            let entry = characteristic(json, Self.mirror(writeOnly))
            #expect(entry?["value"] == nil && entry?["error"] == nil, "write-only characteristics are not read")
        }
        let cccd = services[2]["characteristics"]?.array?[3]["descriptors"]?.array?.first
        #expect(cccd?["uuid"]?.string == "2902" && cccd?["name"]?.string == "Client Characteristic Configuration")
    }

    @Test func readAllInTextShowsNamesValuesAndTheRefusal() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await gatt(peer, ["--read", "all"])
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("  characteristic 2A00 Device Name  handle 3  read\n    value 4d6972726f722034463241  \"Mirror 4F2A\"\n"), "\(result.out)")
        #expect(result.out.contains("  characteristic \(Self.mirror(0x02)) deviceInfo  handle 16  read\n    value 010104024c\n"))
        #expect(result.out.contains("  characteristic \(Self.mirror(0x09)) result  handle 33  read\n    read refused: ATT error 0x02 Read Not Permitted\n"))
    }

    @Test func aRefusedReadAskedForByNameIsAFailureWithItsCodeAndName() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let result = await gatt(peer, ["--read", Self.mirror(0x09), "--json"])
        #expect(result.code == 1)
        let error = try JSONShape.parse(result.out)["error"]
        #expect(error?["kind"]?.string == "device")
        #expect(error?["message"]?.string == "--read \(Self.mirror(0x09)) (result, handle 33): the device answered ATT error 0x02 Read Not Permitted")
        #expect(result.err.contains("the device answered ATT error 0x02 Read Not Permitted"))
    }

    // MARK: writes

    @Test func writesAndWriteCommandsReachThePeerInTheOrderGiven() async throws {
        let peer = try await SharedPeers.shared.peer()
        _ = try await peer.command(["cmd": "writes", "clear": true])
        let result = await gatt(peer, ["--write", "\(Self.generic(0x04))=0102", "--write-command", "\(Self.generic(0x05))=03:04",
                                       "--write", "\(Self.generic(0x04))=FF", "--json"])
        #expect(result.code == 0, "\(result.err)")
        // A Write Command has no answer: by the time the link is closed, the peer has had it (ATT
        // on one link is in order, and the last Write Request's answer came after it).
        let writes = try await peer.command(["cmd": "writes"])["writes"] as? [[String: Any]]
        #expect(writes?.map { "\($0["characteristic"] ?? "")=\($0["hex"] ?? "")" } == ["write=0102", "writeWithoutResponse=0304", "write=ff"])
        let made = try JSONShape.parse(result.out)["writes"]?.array
        #expect(made?.map { $0["value"]?.string } == ["0102", "0304", "ff"])
        // JSON booleans (JSONShape reads them as numbers, so look at the text).
        #expect(result.out.components(separatedBy: "\"withResponse\" : true").count == 3)
        #expect(result.out.components(separatedBy: "\"withResponse\" : false").count == 2)
        #expect(made?.first?["uuid"]?.string == Self.generic(0x04))
    }

    @Test func aWriteCommandToAWriteRequestOnlyCharacteristicIsRefusedWithoutWriting() async throws {
        let peer = try await SharedPeers.shared.peer()
        _ = try await peer.command(["cmd": "writes", "clear": true])
        // The first write is fine: it must not happen either, since the second is checked first.
        let result = await gatt(peer, ["--write", "\(Self.generic(0x04))=01", "--write-command", "\(Self.generic(0x04))=02", "--json"])
        #expect(result.code == 2)
        let error = try JSONShape.parse(result.out)["error"]
        #expect(error?["kind"]?.string == "usage")
        #expect(error?["message"]?.string?.hasSuffix("the characteristic does not take Write Commands (its properties: write); "
                                                      + "it takes Write Requests: use --write") == true)
        let writes = try await peer.command(["cmd": "writes"])["writes"] as? [Any]
        #expect(writes?.isEmpty == true, "nothing was written: \(writes ?? [])")
    }

    @Test func anATTErrorOnAWriteIsReportedWithItsCodeAndName() async throws {
        let peer = try await SharedPeers.shared.peer(Self.mirrorPeer)
        let control = Self.mirror(0x08)
        // An unknown control opcode: 0x13 Value Not Allowed; a value of the wrong length: 0x0D.
        for (value, error) in [("05", "0x13 Value Not Allowed"), ("0102", "0x0D Invalid Attribute Value Length")] {
            let result = await gatt(peer, ["--write", "\(control)=\(value)", "--json"])
            #expect(result.code == 1)
            let message = try JSONShape.parse(result.out)["error"]?["message"]?.string
            #expect(message == "--write \(value) to \(control) (control, handle 31): the device answered ATT error \(error)")
        }
        // Text: the dump came before the writes, then the failure on stderr.
        let text = await gatt(peer, ["--write", "\(control)=03", "--write", "\(control)=09"])
        #expect(text.code == 1)
        #expect(text.out.contains("wrote 03 to \(control) control, handle 31\n"), "abort (03) is accepted in any state")
        #expect(text.err.contains("hwprobe gatt: --write 09 to \(control) (control, handle 31): the device answered ATT error 0x13 Value Not Allowed"))
    }

    @Test func aValueLongerThanOneWriteCarriesIsRefusedBeforeWriting() async throws {
        let peer = try await SharedPeers.shared.peer()
        _ = try await peer.command(["cmd": "writes", "clear": true])
        let result = await gatt(peer, ["--write", "\(Self.generic(0x04))=" + String(repeating: "ab", count: 300), "--json"])
        #expect(result.code == 2)
        #expect(try JSONShape.parse(result.out)["error"]?["message"]?.string?.contains("300 bytes, but one Write Request carries at most") == true)
        #expect((try await peer.command(["cmd": "writes"])["writes"] as? [Any])?.isEmpty == true)
    }

    // MARK: subscriptions

    /// Runs `gatt … --subscribe …` while `during` drives the peer, once the subscription is on
    /// (hwprobe says so on stderr after the CCCD write was answered). Should the run not end
    /// within `limit` of that, the peer drops the link so the test ends (and fails) instead of hanging.
    func subscription(_ peer: PeerProcess, _ arguments: [String], limit: Duration = .seconds(30),
                      during: @Sendable (PeerProcess) async throws -> Void = { _ in }) async throws -> (TimedRun, on: Duration) {
        let watched = WatchedConsole()
        let clock = ContinuousClock()
        let run = Task {
            await HWProbe(console: watched.console, listSources: .empty)
                .run(["gatt", "--hci", peer.tcp.description, peer.address.description + "/public"] + arguments)
        }
        let subscribed = await watched.waitForErr(containing: "receiving ", within: .seconds(30))
        let on = clock.now
        if subscribed {
            try await during(peer)
        } else {
            Issue.record("the subscription never started: \(watched.stderr)")
        }
        let guardian = Task {
            try await clock.sleep(for: limit)
            Issue.record("gatt did not end within \(limit) of subscribing: the peer drops the link")
            _ = try? await peer.command(["cmd": "disconnect"])
        }
        let code = await run.value
        let ended = clock.now
        guardian.cancel()
        return (TimedRun(code: code, out: watched.stdout, err: watched.stderr, seconds: 0), on.duration(to: ended))
    }

    /// The generic peer's notify payload: a u32 sequence number, then bytes 4, 5, … up to `size`.
    static func notification(_ sequence: Int, size: Int = 20) -> String {
        HexValue.text((0..<4).map { UInt8((sequence >> (8 * $0)) & 0xFF) } + (4..<size).map { UInt8($0) })
    }

    @Test func subscribeWithACountReceivesExactlyThatManyInOrder() async throws {
        let peer = try await SharedPeers.shared.peer()
        let (result, _) = try await subscription(peer, ["--subscribe", Self.generic(0x06), "--count", "5", "--json"]) { peer in
            _ = try await peer.command(["cmd": "notify", "count": 8, "size": 20])
        }
        #expect(result.code == 0, "\(result.err)")
        let subscription = try #require(try JSONShape.parse(result.out)["subscription"])
        #expect(subscription["uuid"]?.string == Self.generic(0x06))
        #expect(subscription["received"]?.number == 5)
        let values = try #require(subscription["values"]?.array)
        #expect(values.map { $0["value"]?.string } == (0..<5).map { Self.notification($0) })
        let times = values.compactMap { $0["t"]?.number }
        #expect(times.count == 5 && times == times.sorted() && (times.first ?? -1) >= 0)
        #expect(result.err.contains("received 5 notifications in "), "\(result.err)")
        #expect(result.err.contains("(--count 5)"))
    }

    @Test func textPrintsOneLineOfSecondsHandleAndHexPerValue() async throws {
        let peer = try await SharedPeers.shared.peer()
        let (result, _) = try await subscription(peer, ["--subscribe", Self.generic(0x06), "--count", "3"]) { peer in
            _ = try await peer.command(["cmd": "notify", "count": 3, "size": 6])
        }
        #expect(result.code == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").filter { $0.first?.isNumber == true }.map(String.init)
        #expect(lines.count == 3, "\(result.out)")
        for (index, line) in lines.enumerated() {
            let fields = line.components(separatedBy: "  ")
            #expect(fields.count == 3, "\(line)")
            #expect(fields.first.flatMap(Double.init) != nil && fields.first?.split(separator: ".").last?.count == 3)
            #expect(fields.last == Self.notification(index, size: 6))
        }
        let handle = try #require(lines.first?.components(separatedBy: "  ")[1])
        #expect(result.out.contains("  characteristic \(Self.generic(0x06))  handle \(handle)  read,notify\n"), "the handle is the value handle")
    }

    @Test func indicationsAreConfirmedAndReceivedInOrder() async throws {
        let peer = try await SharedPeers.shared.peer()
        let answer = ConfirmedIndications()
        let (result, _) = try await subscription(peer, ["--subscribe", Self.generic(0x07), "--count", "4", "--json"]) { peer in
            // The peer sends each indication only once the previous one was confirmed.
            let reply = try await peer.command(["cmd": "indicate", "count": 4])
            answer.set(reply["confirmed"] as? Int)
        }
        #expect(result.code == 0, "\(result.err)")
        #expect(answer.value == 4, "every indication was confirmed")
        let values = try JSONShape.parse(result.out)["subscription"]?["values"]?.array
        #expect(values?.map { $0["value"]?.string } == (0..<4).map { Self.notification($0, size: 4) })
        #expect(result.err.contains("received 4 indications"))
    }

    /// hwprobe-issue 14, "Done when": all 20,000 values, in order, from a bumble peer.
    @Test func twentyThousandNotificationsArriveAllAndInOrder() async throws {
        let peer = try await SharedPeers.shared.peer()
        let (result, _) = try await subscription(peer, ["--subscribe", Self.generic(0x06), "--count", "20000", "--json"], limit: .seconds(60)) { peer in
            let answer = try await peer.command(["cmd": "notify", "count": 20000, "size": 20])
            #expect(answer["ok"] as? Bool == true, "\(answer)")
        }
        #expect(result.code == 0, "\(result.err)")
        let subscription = try #require(try JSONShape.parse(result.out)["subscription"])
        #expect(subscription["received"]?.number == 20000)
        let values = try #require(subscription["values"]?.array?.compactMap { $0["value"]?.string })
        let expected = (0..<20000).map { Self.notification($0) }
        #expect(values.count == 20000)
        #expect(values == expected, "first difference at \(values.indices.first { $0 < expected.count && values[$0] != expected[$0] }.map(String.init) ?? "the end")")
        #expect(subscription["truncated"] == nil)
    }

    @Test func secondsEndsTheSubscriptionOnTimeWithWhatCame() async throws {
        let peer = try await SharedPeers.shared.peer()
        let (result, lasted) = try await subscription(peer, ["--subscribe", Self.generic(0x06), "--seconds", "1.5", "--json"]) { peer in
            _ = try await peer.command(["cmd": "notify", "count": 2, "size": 20])
        }
        #expect(result.code == 0, "\(result.err)")
        // From the moment it said it was receiving to the end of the run: the 1.5 s, then turning
        // notifications off and disconnecting.
        #expect(lasted >= .milliseconds(1400) && lasted < .seconds(4), "\(lasted)")
        let subscription = try JSONShape.parse(result.out)["subscription"]
        #expect(subscription?["received"]?.number == 2)
        #expect(subscription?["values"]?.array?.compactMap { $0["t"]?.number }.allSatisfy { $0 < 1.5 } == true)
        #expect(result.err.contains("(--seconds 1.5)"))
    }

    @Test func subscribingToWhatCannotNotifyOrIsNotThereIsRefused() async throws {
        let peer = try await SharedPeers.shared.peer()
        let handle = try await handle(of: 0x02, on: peer)
        let result = await gatt(peer, ["--subscribe", Self.generic(0x02), "--json"])
        #expect(result.code == 2)
        #expect(try JSONShape.parse(result.out)["error"]?["message"]?.string
                == "--subscribe \(Self.generic(0x02)) (handle \(handle)): the characteristic neither notifies nor indicates (its properties: read)")
        let missing = await gatt(peer, ["--subscribe", "2A9D", "--json"])
        #expect(missing.code == 3)
        #expect(try JSONShape.parse(missing.out)["error"]?["message"]?.string == "--subscribe 2A9D: \(peer.address) has no characteristic 2A9D (Weight Measurement)")
    }

    /// A generic characteristic's value handle, as the peer lays its database out.
    func handle(of id: UInt8, on peer: PeerProcess) async throws -> Int {
        let database = try await peer.command(["cmd": "database"])["database"] as? [String: Any]
        let services = database?["services"] as? [[String: Any]] ?? []
        let all = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        return try #require(all.first { $0["uuid"] as? String == Self.generic(id) }?["handle"] as? Int)
    }
}

/// What the peer said of its indications, from inside the `during` closure.
final class ConfirmedIndications: Sendable {
    private let confirmed = Mutex<Int?>(nil)
    func set(_ value: Int?) { confirmed.withLock { $0 = value } }
    var value: Int? { confirmed.withLock { $0 } }
}

/// A console a test can wait on: `waitForErr` returns as soon as stderr holds a text (or at the
/// deadline), so a test acts the moment hwprobe says it is ready, without sleeping.
final class WatchedConsole: Sendable {
    private struct State {
        var out = ""
        var err = ""
        var waiters: [(id: Int, text: String, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
        /// Waits whose deadline passed before they were registered.
        var expired: Set<Int> = []
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    let console: Console

    init() {
        let shared = shared
        console = Console(isTerminal: false, environment: [:]) { stream, text in
            let ready = shared.state.withLock { s -> [CheckedContinuation<Bool, Never>] in
                if stream == .out { s.out += text } else { s.err += text }
                let err = s.err
                let done = s.waiters.filter { err.contains($0.text) }
                s.waiters.removeAll { err.contains($0.text) }
                return done.map(\.continuation)
            }
            for continuation in ready { continuation.resume(returning: true) }
        }
    }

    var stdout: String { shared.state.withLock { $0.out } }
    var stderr: String { shared.state.withLock { $0.err } }

    func waitForErr(containing text: String, within limit: Duration) async -> Bool {
        let shared = shared
        let id = shared.state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            let waiter = shared.state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else {
                    s.expired.insert(id)
                    return nil
                }
                return s.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let now = shared.state.withLock { s -> Bool? in
                if s.err.contains(text) { return true }
                if s.expired.contains(id) { return false }
                s.waiters.append((id, text, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
