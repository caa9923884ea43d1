import Foundation
import HAL
import Synchronization
import Transports

/// The bumble peer (Tests/Peers/ble_peer.py) in its own process: two virtual controllers on one
/// link, one of them reachable over TCP (and a pty) for our stack, the other a peripheral.
public final class PeerProcess: Sendable {
    public let tcp: DeviceURI
    public let pty: String?
    public let address: BLEAddress
    public let control: (host: String, port: UInt16)
    private let process: Process
    private let input: Pipe

    /// Where `scripts/setup-peers` puts bumble.
    public static var python: String? {
        let path = repositoryRoot + "/.venv-peers/bin/python"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    public static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Starts a peer and waits (up to 30 s) for its READY line.
    public static func start(_ arguments: [String] = []) async throws -> PeerProcess {
        guard let python else { throw StartFailure(description: "no .venv-peers: run scripts/setup-peers") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [repositoryRoot + "/Tests/Peers/ble_peer.py"] + arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = try await readyLine(from: output.fileHandleForReading, deadline: .seconds(30))
        return try PeerProcess(process: process, input: input, ready: ready)
    }

    private init(process: Process, input: Pipe, ready: String) throws {
        self.process = process
        self.input = input
        var fields: [String: String] = [:]
        for part in ready.split(separator: " ").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        guard let tcpText = fields["tcp"], let tcp = try? DeviceURI(parsing: "tcp:" + tcpText),
              let addressText = fields["address"], let address = BLEAddress(string: addressText),
              let controlText = fields["control"], let colon = controlText.lastIndex(of: ":"),
              let controlPort = UInt16(controlText[controlText.index(after: colon)...])
        else { throw StartFailure(description: "unexpected READY line: \(ready)") }
        self.tcp = tcp
        self.address = address
        pty = fields["pty"]
        control = (String(controlText[..<colon]), controlPort)
    }

    /// Waits for the peer's READY line without polling: a reader thread resumes the waiter, and a
    /// deadline resumes it with an error if the peer never gets there.
    static func readyLine(from handle: FileHandle, deadline: Duration) async throws -> String {
        let once = OnceContinuation()
        let finish: @Sendable (Result<String, any Error>) -> Void = { once.resume(with: $0) }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            once.set(continuation)
            let reader = Thread {
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty {
                        finish(.failure(StartFailure(description: "the peer exited before it was ready")))
                        return
                    }
                    buffer.append(chunk)
                    if let text = String(data: buffer, encoding: .utf8),
                       let found = text.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }) {
                        finish(.success(String(found)))
                        return
                    }
                }
            }
            reader.start()
            Task {
                try? await ContinuousClock().sleep(for: deadline)
                finish(.failure(StartFailure(description: "the peer did not become ready within \(deadline)")))
            }
        }
    }

    /// Sends one control command and returns its one-line JSON answer.
    public func command(_ json: [String: Any]) async throws -> [String: Any] {
        try await Self.command(json, host: control.host, port: control.port)
    }

    /// One command on a peer's control channel (one JSON line, one JSON line back).
    static func command(_ json: [String: Any], host: String, port: UInt16) async throws -> [String: Any] {
        let stream = try await HCIStreams.open(.tcp(host: host, port: port))
        defer { Task { await stream.close() } }
        let data = try JSONSerialization.data(withJSONObject: json)
        try await stream.write(Array(data) + [0x0A])
        var received: [UInt8] = []
        for try await chunk in stream.incoming() {
            received += chunk
            if let newline = received.firstIndex(of: 0x0A) {
                let answer = try JSONSerialization.jsonObject(with: Data(received[..<newline]))
                return answer as? [String: Any] ?? [:]
            }
        }
        throw StartFailure(description: "the control channel closed without an answer")
    }

    /// Waits (up to 5 s, polling the peer's control channel) until its peripheral has no
    /// connection: a link left over from the previous host would keep it from advertising.
    public func waitUntilIdle() async {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(5))
        while clock.now < end {
            guard let state = try? await command(["cmd": "state"]) else { return }
            if state["connected"] as? Bool != true { return }
            try? await clock.sleep(for: .milliseconds(50))
        }
    }

    public func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}

/// Resumes a continuation at most once, whoever comes first.
final class OnceContinuation: Sendable {
    private let slot = Mutex<CheckedContinuation<String, any Error>?>(nil)
    func set(_ continuation: CheckedContinuation<String, any Error>) { slot.withLock { $0 = continuation } }
    func resume(with result: Result<String, any Error>) {
        let continuation = slot.withLock { slot -> CheckedContinuation<String, any Error>? in
            defer { slot = nil }
            return slot
        }
        continuation?.resume(with: result)
    }
}

/// Peers shared per configuration: one process per set of arguments for the whole test run.
public actor SharedPeers {
    public static let shared = SharedPeers()
    private var peers: [[String]: PeerProcess] = [:]
    private var failures: [[String]: String] = [:]
    private let turn = AsyncLock()

    /// Runs `body` while no other test uses any peer: a peer's controller serves one host at a
    /// time, and test suites run in parallel. Afterwards every peer is given back idle (its
    /// peripheral disconnected and advertising again), so the next test starts clean.
    public func exclusive<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await turn.acquire()
        defer { turn.release() }
        do {
            let result = try await body()
            await settlePeers()
            return result
        } catch {
            await settlePeers()
            throw error
        }
    }

    private func settlePeers() async {
        for peer in Array(peers.values) { await peer.waitUntilIdle() }
    }

    public func peer(_ arguments: [String] = ["--pty"]) async throws -> PeerProcess {
        if let peer = peers[arguments] { return peer }
        if let failure = failures[arguments] { throw PeerProcess.StartFailure(description: failure) }
        do {
            let started = try await PeerProcess.start(arguments)
            peers[arguments] = started
            return started
        } catch {
            failures[arguments] = "\(error)"
            throw error
        }
    }
}

/// Whether the bumble venv exists (CI makes it with scripts/setup-peers).
public let peerAvailable = PeerProcess.python != nil

import Testing

/// Runs each test of a suite while it alone uses the peers (see `SharedPeers.exclusive`).
public struct ExclusivePeerTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil || !test.isSuite else {
            try await function()
            return
        }
        try await SharedPeers.shared.exclusive { try await function() }
    }
}

extension Trait where Self == ExclusivePeerTrait {
    /// The test runs alone with the bumble peers.
    public static var exclusivePeer: Self { ExclusivePeerTrait() }
}
