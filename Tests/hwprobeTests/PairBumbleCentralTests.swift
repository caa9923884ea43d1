import BLEProtocol
import Foundation
import HAL
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// bumble's central (Tests/Peers/central_peer.py `--pairing`: bumble's Security Manager with its
/// stock defects fixed) pairs with `hwprobe serve … --pairing required` and reads what only an
/// authenticated link may read; the central's own events judge what happened. One bumble process
/// for the suite.
@Suite(.serialized, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PairBumbleCentralTests {
    static let central = Task { try await CentralPeer.start(hosts: 1, arguments: ["--pairing"]) }
    /// The served profile's static random address, known before it advertises.
    static let address = "C4:29:00:00:00:01"
    /// Open, authenticated only (`3200`), encrypted only (`armpit`).
    static let profile = """
    {"name": "Paired Thermo", "address": "\(address)", "advertising": {"form": "extended"},
     "services": [{"uuid": "181A", "characteristics": [
        {"uuid": "2A6E", "properties": ["read"], "value": "0a01"},
        {"uuid": "2A6F", "properties": ["read"], "value": "3200", "security": {"read": "authenticated"}},
        {"uuid": "2A1D", "properties": ["read"], "text": "armpit", "security": {"read": "encrypted"}}]}]}
    """

    /// The central with these pairing options (the others at their defaults) and no bond.
    static func central(_ options: [String: Any]) async throws -> CentralPeer {
        let central = try await Self.central.value
        try await central.resetPairing(options)
        return central
    }

    /// `hwprobe serve --hci <host 0> profile:… --pairing required …` in this process (so that a
    /// person can stand in for the terminal's user), until `body` returns.
    static func serving<T: Sendable>(_ central: CentralPeer, _ options: [String], person: (any PairingDelegate)? = nil,
                                     _ body: @Sendable (CapturedConsole) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appending(path: "pairbumble-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(profile.utf8).write(to: URL(fileURLWithPath: directory + "/profile.json"))
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": directory])
        let arguments = ["serve", "--hci", central.hosts[0].description, "profile:\(directory)/profile.json",
                         "--pairing", "required", "--seconds", "60", "--json"] + options
        let server = Task { await HWProbe(console: captured.console, listSources: .empty, pairingPerson: person).run(arguments) }
        do {
            let result = try await body(captured)
            server.cancel()
            #expect(await server.value == 0, "\(captured.stderr)")
            return result
        } catch {
            server.cancel()
            _ = await server.value
            throw error
        }
    }

    /// Connects (serve asks for security at once: the central pairs, or encrypts with its bond),
    /// waits for how that ended, and reads the authenticated value; returns the central's events.
    static func connectSecureAndRead(_ central: CentralPeer) async throws -> (events: [PeerEvent], value: [String: Any]) {
        let mark = try await central.eventMark()
        try await central.checkedCommand(["cmd": "connect", "address": address + "/random", "timeout": 10])
        _ = try await central.waitForEvent("paired", "pairing_failed", "encryption_changed", since: mark, timeout: .seconds(10))
        let value = try await central.checkedCommand(["cmd": "secure_read", "uuid": "2A6F"])
        let events = try await central.events(since: mark).events
        try await central.checkedCommand(["cmd": "disconnect"])
        return (events, value)
    }

    /// The second "Done when", Passkey Entry: serve types the passkey bumble's central
    /// shows (`--io keyboard --passkey`); the authenticated value is read; a second connection is
    /// encrypted with the bond, no pairing.
    @Test func passkeyTypedByServeBondsAndTheNextConnectionEncryptsWithTheBond() async throws {
        let central = try await Self.central(["io": "display", "mitm": true, "passkey": 246810])
        try await Self.serving(central, ["--io", "keyboard", "--passkey", "246810"]) { served in
            let first = try await Self.connectSecureAndRead(central)
            let paired = try #require(first.events.first { $0.name == "paired" }, "\(first.events)\n\(served.stdout)")
            #expect(paired.string("method") == "passkey-entry" && paired.bool("authenticated") == true
                    && paired.bool("sc") == true && paired.bool("bonded") == true, "\(paired)")
            #expect(first.value["value"] as? String == "3200", "\(first.value)")
            #expect(served.stdout.contains("\"event\":\"paired\""), "\(served.stdout)")

            let second = try await Self.connectSecureAndRead(central)
            #expect(!second.events.contains { $0.name == "pairing_started" }, "\(second.events)")
            let encryption = try #require(second.events.first { $0.name == "encryption_changed" }, "\(second.events)")
            #expect(encryption.string("cause") == "bond" && encryption.bool("pairing") == false
                    && encryption.bool("authenticated") == true, "\(encryption)")
            #expect(second.value["value"] as? String == "3200", "\(second.value)")
        }
    }

    /// `serve --pairing required --privacy` (issue 29): bumble's central finds the device at a
    /// resolvable private address, pairs, and receives an IRK and an identity address: the
    /// identity is the profile's static random address (not the private one, not the
    /// controller's public one), and the IRK made the address the central connected to. What
    /// the central received is its own event (`keys`, with `revealKeys`).
    @Test func privacyAdvertisesFromAPrivateAddressAndDistributesTheIRKThatMadeIt() async throws {
        let central = try await Self.central(["io": "none", "revealKeys": true])
        try await Self.serving(central, ["--privacy"]) { served in
            let scan = try await central.checkedCommand(["cmd": "scan", "seconds": 1.5])
            let devices = scan["devices"] as? [[String: Any]] ?? []
            let seen = try #require(devices.first { $0["name"] as? String == "Paired Thermo" }, "\(devices)\n\(served.stdout)")
            let rpaText = String((seen["address"] as? String ?? "").prefix(17))
            let rpa = try #require(BLEAddress(string: rpaText, defaultKind: .random), "\(seen)")
            #expect(ResolvablePrivateAddress.isResolvable(rpa), "serve advertised from \(rpaText), not a private address")
            #expect(!devices.contains { ($0["address"] as? String ?? "").hasPrefix(Self.address) }, "the identity advertised too: \(devices)")

            let mark = try await central.eventMark()
            try await central.checkedCommand(["cmd": "connect", "address": rpaText + "/random", "timeout": 10])
            _ = try await central.waitForEvent("paired", since: mark, timeout: .seconds(10))
            let received = try #require(try await central.events(since: mark).events
                .first { $0.name == "keys" && $0.string("direction") == "received" })
            let values = received.fields["values"] as? [String: Any] ?? [:]
            #expect(values["identityAddress"] as? String == Self.address + "/random", "\(received)")
            // bumble keeps SMP's octet order, least significant first.
            let irkWire = try #require(Hex.bytes(values["irk"] as? String ?? ""), "\(received)")
            let irk = try #require(SecurityKey(bytes: irkWire.reversed()))
            #expect(!irk.isZero)
            #expect(ResolvablePrivateAddress.resolves(rpa, with: irk), "the IRK given does not resolve \(rpaText)")
            try await central.checkedCommand(["cmd": "disconnect"])
        }
    }

    /// Passkey Entry the other way: serve shows it (`--io display`), the central's user types it.
    @Test func passkeyShownByServeIsTypedOnTheCentral() async throws {
        let central = try await Self.central(["io": "keyboard", "mitm": true])
        let person = PairingPerson(typesShownPasskey: { passkey in try? await central.enterPasskey(Int(passkey)) })
        try await Self.serving(central, ["--io", "display"], person: person) { _ in
            let run = try await Self.connectSecureAndRead(central)
            let entered = try #require(run.events.first { $0.name == "passkey_entered" }, "\(run.events)")
            #expect(entered.string("passkey") == person.shown.first.map(UnattendedPairing.digits), "\(entered) vs \(person.shown)")
            let paired = try #require(run.events.first { $0.name == "paired" }, "\(run.events)")
            #expect(paired.string("method") == "passkey-entry" && paired.bool("authenticated") == true, "\(paired)")
            #expect(run.value["value"] as? String == "3200", "\(run.value)")
        }
    }

    /// The second "Done when", Numeric Comparison: serve's person and bumble's see the same
    /// six digits and both accept; the authenticated value is read.
    @Test func numericComparisonShowsBothSidesTheSameNumberAndReadsTheAuthenticatedValue() async throws {
        let central = try await Self.central(["io": "display-yes-no", "mitm": true, "sc": "only"])
        let person = PairingPerson(accepts: true)
        try await Self.serving(central, ["--io", "display-yes-no"], person: person) { served in
            let run = try await Self.connectSecureAndRead(central)
            let compared = try #require(run.events.first { $0.name == "numeric_comparison" }, "\(run.events)")
            #expect(compared.string("value") == person.compared.first.map(UnattendedPairing.digits) && compared.bool("accepted") == true,
                    "\(compared) vs \(person.compared)")
            let paired = try #require(run.events.first { $0.name == "paired" }, "\(run.events)\n\(served.stdout)\n\(served.stderr)")
            #expect(paired.string("method") == "numeric-comparison" && paired.bool("authenticated") == true
                    && paired.bool("sc") == true, "\(paired)")
            #expect(run.value["value"] as? String == "3200", "\(run.value)")
            #expect(served.stdout.contains("numeric-comparison"), "\(served.stdout)")
        }
    }

    /// The responder's failures, as bumble's central sees them: a wrong passkey typed on the
    /// central (Confirm Value Failed, 0x04) and a central whose public key is off the curve
    /// (DHKey Check Failed, 0x0B, sent by serve); serve stores nothing and says why.
    @Test func serveRefusesAWrongPasskeyAndAnOffCurveKey() async throws {
        let central = try await Self.central(["io": "keyboard", "mitm": true, "passkey": 111111])
        try await Self.serving(central, ["--io", "display"]) { served in
            let wrong = try await Self.connectSecureAndRead(central)
            let failed = try #require(wrong.events.first { $0.name == "pairing_failed" }, "\(wrong.events)")
            #expect(failed.int("reason") == 0x04, "\(failed)")
            #expect(wrong.value["attError"] as? Int == 0x05, "\(wrong.value)")
            #expect(served.stdout.contains("0x04 Confirm Value Failed"), "\(served.stdout)")
        }
        // A new serve process (as a new run is): no repeated-attempts wait left from the failure above.
        try await central.resetPairing(["io": "none"])
        try await central.pairingFault("off_curve_key", at: "public_key")
        try await Self.serving(central, []) { served in
            let offCurve = try await Self.connectSecureAndRead(central)
            let refused = try #require(offCurve.events.first { $0.name == "pairing_failed" }, "\(offCurve.events)")
            #expect(refused.int("reason") == 0x0B && refused.string("by") == "peer", "\(refused)")
            #expect(served.stdout.contains("0x0B DHKey Check Failed"), "\(served.stdout)")
            #expect(!served.stdout.contains("\"event\":\"encrypted\""), "\(served.stdout)")
        }
    }
}
