import Foundation

/// One thing the bumble peer did, as it reported it on its control channel (Tests/Peers/README.md,
/// "Pairing"): a test judges the peer by these, never by bumble's own flags, which stock bumble
/// sets wrong (every encrypted link "authenticated").
public struct PeerEvent: Sendable, CustomStringConvertible {
    /// The event's name: `paired`, `encryption_changed`, `pairing_failed`, …
    public let name: String
    /// The whole event as the peer sent it (one JSON object).
    public let json: String

    init?(object: [String: Any]) {
        guard let name = object["event"] as? String,
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let json = String(data: data, encoding: .utf8)
        else { return nil }
        self.name = name
        self.json = json
    }

    /// The event's fields (decoded again on each use: a test reads a few).
    public var fields: [String: Any] {
        guard let data = json.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    public func string(_ key: String) -> String? { fields[key] as? String }
    public func int(_ key: String) -> Int? { (fields[key] as? NSNumber)?.intValue }
    public func bool(_ key: String) -> Bool? { fields[key] as? Bool }

    public var description: String { json }
}

/// A bumble process with a control channel that speaks the pairing commands: the peripheral
/// (`ble_peer.py`) and the central (`central_peer.py --pairing`).
public protocol PairingPeerControl: Sendable {
    /// Where its control channel listens.
    var control: (host: String, port: UInt16) { get }
}

extension PeerProcess: PairingPeerControl {
    public struct CommandFailure: Error, CustomStringConvertible {
        public let description: String
    }
}

extension CentralPeer: PairingPeerControl {}

/// The pairing peer's knobs and events, over its control channel. Each call is one command;
/// waits happen in the peer, which answers with an error once its own deadline has passed.
extension PairingPeerControl {
    /// Sends a command and returns its answer, throwing when the peer says it failed.
    @discardableResult
    public func checkedCommand(_ json: [String: Any]) async throws -> [String: Any] {
        let answer = try await PeerProcess.command(json, host: control.host, port: control.port)
        guard answer["ok"] as? Bool == true else {
            throw PeerProcess.CommandFailure(description: "peer \(json["cmd"] ?? "?"): \(answer["error"] ?? answer)")
        }
        return answer
    }

    /// Every event from index `since` on, and the index to continue from.
    public func events(since: Int = 0) async throws -> (events: [PeerEvent], next: Int) {
        let answer = try await checkedCommand(["cmd": "events", "since": since])
        let events = (answer["events"] as? [[String: Any]] ?? []).compactMap(PeerEvent.init(object:))
        return (events, (answer["next"] as? NSNumber)?.intValue ?? since + events.count)
    }

    /// Where the event log ends now: pass it as `since` to wait only for what comes next.
    public func eventMark() async throws -> Int {
        try await events(since: Int.max).next
    }

    /// The first event at or after `since` named one of `names` whose fields equal `matching`;
    /// the peer waits up to `timeout` and the call throws if nothing came.
    public func waitForEvent(
        _ names: String..., since: Int = 0, matching: [String: Any] = [:], timeout: Duration = .seconds(5)
    ) async throws -> PeerEvent {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let answer = try await checkedCommand([
            "cmd": "events", "since": since, "wait": names, "match": matching, "timeout": seconds,
        ])
        guard let object = answer["matched"] as? [String: Any], let event = PeerEvent(object: object) else {
            throw PeerProcess.CommandFailure(description: "peer events: no event in the answer \(answer)")
        }
        return event
    }

    /// Changes the pairing options (`io`, `sc`, `bonding`, `mitm`, `passkey`, `compare`,
    /// `maxKeySize`, `minKeySize`, `smpTimeout`, `revealKeys`, `securityRequest`).
    public func configurePairing(_ options: [String: Any]) async throws {
        try await checkedCommand(options.merging(["cmd": "pairing"]) { _, new in new })
    }

    /// A one-shot fault: `silent`, `drop_link`, `off_curve_key`, `wrong_confirm`,
    /// `wrong_dhkey_check` or `refuse`, at the `nth` PDU of `stage` the peer sends.
    public func pairingFault(_ kind: String, at stage: String? = nil, nth: Int = 1, reason: Int? = nil) async throws {
        var request: [String: Any] = ["cmd": "pairing_fault", "fault": kind, "nth": nth]
        if let stage { request["at"] = stage }
        if let reason { request["reason"] = reason }
        try await checkedCommand(request)
    }

    /// The passkey the peer's user types (to the pairing waiting for it, or the next one).
    public func enterPasskey(_ passkey: Int) async throws {
        try await checkedCommand(["cmd": "passkey", "passkey": passkey])
    }

    /// The peer's user's answer to a numeric comparison (with `compare: ask`).
    public func answerComparison(_ accept: Bool) async throws {
        try await checkedCommand(["cmd": "compare", "accept": accept])
    }

    /// A clean start for one test on a shared peer: no bond, no fault, and the pairing options at
    /// their defaults except `options`.
    public func resetPairing(_ options: [String: Any]) async throws {
        try await removeBonds()
        try await checkedCommand(["cmd": "pairing_fault", "fault": "clear"])
        let defaults: [String: Any] = ["io": "none", "sc": "allowed", "mitm": false, "bonding": true, "passkey": NSNull(),
                                       "compare": "yes", "smpTimeout": 30]
        try await configurePairing(defaults.merging(options) { $1 })
    }

    /// Forgets the peer's bonds (a shared peer keeps them for its lifetime).
    public func removeBonds() async throws {
        try await checkedCommand(["cmd": "bonds", "remove": "all"])
    }
}
