import Foundation
import HAL
import Transports

/// bumble's host as the central (Tests/Peers/central_peer.py) in its own process: controllers A
/// on TCP for hwprobe processes (the first for `hwprobe serve`, the others for hwprobe as a
/// central), and controller C with a bumble Device driven through the control channel.
public final class CentralPeer: Sendable {
    /// One per controller A, in order.
    public let hosts: [DeviceURI]
    public let control: (host: String, port: UInt16)
    private let process: Process
    private let input: Pipe

    /// Starts the peer with `hosts` controllers A and waits (up to 30 s) for its READY line;
    /// `arguments` go to central_peer.py as they are (`--mirror`: the mirror peer on the link too;
    /// `--pairing`: the fixed Security Manager and its commands).
    public static func start(hosts: Int = 1, arguments: [String] = []) async throws -> CentralPeer {
        guard let python = PeerProcess.python else { throw PeerProcess.StartFailure(description: "no .venv-peers: run scripts/setup-peers") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [PeerProcess.repositoryRoot + "/Tests/Peers/central_peer.py", "--hosts", "\(hosts)"] + arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = try await PeerProcess.readyLine(from: output.fileHandleForReading, deadline: .seconds(30))
        return try CentralPeer(process: process, input: input, ready: ready)
    }

    private init(process: Process, input: Pipe, ready: String) throws {
        self.process = process
        self.input = input
        var fields: [String: String] = [:]
        for part in ready.split(separator: " ").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        let hosts = (fields["tcp"] ?? "").split(separator: ",").compactMap { try? DeviceURI(parsing: "tcp:" + $0) }
        guard !hosts.isEmpty, let controlText = fields["control"], let colon = controlText.lastIndex(of: ":"),
              let controlPort = UInt16(controlText[controlText.index(after: colon)...])
        else { throw PeerProcess.StartFailure(description: "unexpected READY line: \(ready)") }
        self.hosts = hosts
        control = (String(controlText[..<colon]), controlPort)
    }

    /// Sends one control command; a command that failed in the peer throws with its reason.
    @discardableResult
    public func command(_ json: [String: Any]) async throws -> [String: Any] {
        let answer = try await PeerProcess.command(json, host: control.host, port: control.port)
        guard answer["ok"] as? Bool == true else {
            throw PeerProcess.StartFailure(description: "central \(json["cmd"] ?? "?"): \(answer["error"] ?? answer)")
        }
        return answer
    }

    public func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
