import BLEProtocol
import Foundation
import HAL
import HALFakes
import PeerSupport
import Testing
import Transports
@testable import hwprobe

/// `hwprobe pair` (central) against bumble's pairing peripheral (Tests/Peers, profile `secure`:
/// bumble's Security Manager with its stock defects fixed), every method. What happened is judged
/// from the peer's own events (its `method`, `paired`, `pairing_failed`, `encryption_changed`),
/// never from what our side says about itself. One peer process for the suite; each test sets the
/// peer's options and forgets its bonds first, and keeps its own bond store (XDG_STATE_HOME).
@Suite(.serialized, .exclusivePeer, .enabled(if: peerAvailable, "no bumble venv: run scripts/setup-peers (CI does)"))
struct PairBumblePeripheralTests {
    /// Its own process (no other suite starts a peer with this address).
    static let arguments = ["--profile", "secure", "--address", "B0:B0:B0:00:00:29"]
    /// `secure`'s characteristics: authenticated Secure Connections, and any encryption.
    static let authenticatedSC = "A5C30011-6B1E-4F2A-9D3C-2B7E5F10C4A9"
    static let encrypted = "A5C30012-6B1E-4F2A-9D3C-2B7E5F10C4A9"

    /// The peer with these pairing options (the others at their defaults), no bond, no fault.
    static func peer(_ options: [String: Any]) async throws -> PeerProcess {
        let peer = try await SharedPeers.shared.peer(arguments)
        try await peer.resetPairing(options)
        return peer
    }

    /// A scratch XDG_STATE_HOME for one test's bond stores.
    static func stateDirectory() -> String {
        FileManager.default.temporaryDirectory.appending(path: "pairbumble-\(UUID().uuidString)").path
    }

    /// `hwprobe pair --hci <peer> <peer address> …` in this process.
    static func pair(_ peer: PeerProcess, _ options: [String], state: String,
                     person: (any PairingDelegate)? = nil) async -> (code: Int32, out: String, err: String) {
        let captured = CapturedConsole(environment: ["XDG_STATE_HOME": state])
        let code = await HWProbe(console: captured.console, listSources: .empty, pairingPerson: person)
            .run(["pair", "--hci", peer.tcp.description, peer.address.description] + options)
        return (code, captured.stdout, captured.stderr)
    }

    /// What a later command does with the bond: a new host on the same controller, its bond store
    /// read from `state`, connects, secures the link (the bond's key, or a pairing if it must) and
    /// reads `uuid`. The answer is how the link was secured and the value (or the ATT error).
    static func secureAndRead(_ peer: PeerProcess, _ uuid: String, state: String, recorder: CassetteRecorder? = nil) async throws
        -> (outcome: SecuringOutcome, value: Result<[UInt8], BLEError>) {
        let central = try await BLECentral.open(peer.tcp, tap: recorder)
        do {
            let bonds = try await PairingOptions.bondStore(host: central.host, environment: ["XDG_STATE_HOME": state])
            await central.host.useSecurity(HostSecurity(configuration: SecurityConfiguration(ioCapability: .noInputNoOutput),
                                                        bonds: bonds, delegate: RefusingPerson()))
            let connection = try await central.connect(peer.address)
            let outcome = try await central.host.secure(connection)
            let wanted = try #require(BluetoothUUID(string: uuid))
            let characteristic = try #require(try await connection.gatt.discoverAll().flatMap(\.characteristics)
                .first { $0.uuid == wanted })
            let value: Result<[UInt8], BLEError>
            do { value = .success(try await connection.gatt.read(characteristic.valueHandle)) } catch { value = .failure(error) }
            await connection.disconnect()
            await central.close()
            return (outcome, value)
        } catch {
            await central.close()
            throw error
        }
    }

    /// Every bond the controller's store under `state` holds (none when there is no file).
    static func storedBonds(_ state: String) -> String {
        let directory = state + "/hwprobe/bonds"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { FileManager.default.contents(atPath: directory + "/" + $0) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
    }

    /// The peer's events since `mark`, by name.
    static func names(_ peer: PeerProcess, since mark: Int) async throws -> [String] {
        try await peer.events(since: mark).events.map(\.name)
    }

    // MARK: Secure Connections

    /// The issue's first "Done when": the peer requires authenticated SC (SC Only, MITM) and shows
    /// its passkey; `pair --passkey` types it and bonds. Then a later command encrypts with the
    /// bond and reads the protected value, twice, and the peer sees encryptions, not pairings.
    @Test func passkeyTypedHereBondsAuthenticatedSCAndLaterRunsEncryptWithoutPairing() async throws {
        let peer = try await Self.peer(["io": "display", "sc": "only", "mitm": true, "passkey": 123456])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let mark = try await peer.eventMark()
        let run = await Self.pair(peer, ["--io", "keyboard", "--passkey", "123456", "--json"], state: state)
        #expect(run.code == 0, "\(run.out)\(run.err)")
        let json = try JSONShape.parse(run.out)
        #expect(json["method"]?.string == "passkey", "\(run.out)")
        #expect(run.out.contains("\"bonded\":true") && run.out.contains("\"secureConnections\":true"), "\(run.out)")

        let method = try await peer.waitForEvent("method", since: mark)
        #expect(method.string("method") == "passkey-entry" && method.string("passkeyDisplayedBy") == "us", "\(method)")
        let paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.bool("sc") == true && paired.bool("authenticated") == true && paired.bool("bonded") == true, "\(paired)")
        #expect(paired.int("keySize") == 16, "\(paired)")
        #expect(!Self.storedBonds(state).isEmpty)

        for _ in 1...2 {
            let again = try await peer.eventMark()
            let recorder = CassetteRecorder()
            let (outcome, value) = try await Self.secureAndRead(peer, Self.authenticatedSC, state: state, recorder: recorder)
            // Recorded as it happened: an encryption, no pairing (cassette format 1.2).
            let cassette = recorder.text()
            #expect(cassette.contains("\nencrypted ") && !cassette.contains("\npairing "), "\(cassette)")
            guard case .encrypted(let security) = outcome else {
                Issue.record("not encrypted with the bond: \(outcome)")
                return
            }
            #expect(security.isAuthenticated && security.isSecureConnections, "\(security)")
            #expect(try value.get() == Array("authenticated-sc".utf8))
            let encryption = try await peer.waitForEvent("encryption_changed", since: again)
            #expect(encryption.bool("pairing") == false && encryption.string("cause") == "bond"
                    && encryption.bool("authenticated") == true, "\(encryption)")
            let seen = try await Self.names(peer, since: again)
            #expect(!seen.contains("pairing_started") && !seen.contains("paired"), "\(seen)")
        }
    }

    /// The other way round: hwprobe shows the passkey (`--io display`), the peer's user types what
    /// it shows (the person here reads one screen and types on the other).
    @Test func passkeyShownHereIsTypedOnThePeer() async throws {
        let peer = try await Self.peer(["io": "keyboard", "sc": "only", "mitm": true])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let mark = try await peer.eventMark()
        let person = PairingPerson(typesShownPasskey: { passkey in try? await peer.enterPasskey(Int(passkey)) })
        let run = await Self.pair(peer, ["--io", "display", "--json"], state: state, person: person)
        #expect(run.code == 0, "\(run.out)\(run.err)")
        let method = try await peer.waitForEvent("method", since: mark)
        #expect(method.string("method") == "passkey-entry" && method.string("passkeyDisplayedBy") == "peer", "\(method)")
        let entered = try await peer.waitForEvent("passkey_entered", since: mark)
        let shown = try #require(person.shown.first)
        #expect(entered.string("passkey") == UnattendedPairing.digits(shown), "\(entered) vs shown \(shown)")
        let paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.bool("authenticated") == true && paired.bool("sc") == true, "\(paired)")
    }

    /// Numeric comparison: refused without a person (the contract's unattended rule: 0x0C, exit
    /// 1, nothing stored); with one who accepts, both sides showed the same six digits.
    @Test func numericComparisonIsRefusedUnattendedAndBothSidesShowTheSameNumber() async throws {
        let peer = try await Self.peer(["io": "display-yes-no", "sc": "only", "mitm": true])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var mark = try await peer.eventMark()
        let refused = await Self.pair(peer, ["--io", "display-yes-no"], state: state)
        #expect(refused.code == 1, "\(refused.out)\(refused.err)")
        #expect(refused.err.contains("0x0C"), "\(refused.err)")
        let failed = try await peer.waitForEvent("pairing_failed", since: mark)
        #expect(failed.int("reason") == 0x0C && failed.string("by") == "peer", "\(failed)")
        #expect(Self.storedBonds(state).isEmpty)

        mark = try await peer.eventMark()
        let person = PairingPerson(accepts: true)
        let accepted = await Self.pair(peer, ["--io", "display-yes-no", "--json"], state: state, person: person)
        #expect(accepted.code == 0, "\(accepted.out)\(accepted.err)")
        #expect(try JSONShape.parse(accepted.out)["method"]?.string == "numeric-comparison", "\(accepted.out)")
        let compared = try await peer.waitForEvent("numeric_comparison", since: mark)
        let ours = try #require(person.compared.first)
        #expect(compared.string("value") == UnattendedPairing.digits(ours) && compared.bool("accepted") == true, "\(compared) vs ours \(ours)")
        let paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.string("method") == "numeric-comparison" && paired.bool("authenticated") == true, "\(paired)")
    }

    /// Just Works where the peer allows it (no MITM): a bond that is not authenticated, so the
    /// authenticated value stays refused (0x05) and the encrypted one is read. A peer that asks
    /// for MITM refuses Just Works (0x03).
    @Test func justWorksWhereAllowedAndRefusedWhereMITMIsRequired() async throws {
        let peer = try await Self.peer(["io": "none"])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var mark = try await peer.eventMark()
        let run = await Self.pair(peer, ["--json"], state: state)
        #expect(run.code == 0, "\(run.out)\(run.err)")
        let paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.string("method") == "just-works" && paired.bool("sc") == true && paired.bool("authenticated") == false, "\(paired)")
        let plain = try await Self.secureAndRead(peer, Self.encrypted, state: state)
        #expect(try plain.value.get() == Array("encrypted".utf8))
        let guarded = try await Self.secureAndRead(peer, Self.authenticatedSC, state: state)
        guard case .failure(.att(let failure)) = guarded.value else {
            Issue.record("an unauthenticated bond read the authenticated value: \(guarded.value)")
            return
        }
        #expect(failure.code == 0x05)

        try await peer.removeBonds()
        try await peer.configurePairing(["mitm": true])
        mark = try await peer.eventMark()
        let refused = await Self.pair(peer, [], state: Self.stateDirectory())
        #expect(refused.code == 1 && refused.err.contains("0x03"), "\(refused.err)")
        let failed = try await peer.waitForEvent("pairing_failed", since: mark)
        #expect(failed.int("reason") == 0x03 && failed.string("by") == "us", "\(failed)")
    }

    // MARK: Legacy pairing

    /// `--legacy`: Just Works, then Passkey Entry (the peer shows 000123, typed here); the legacy
    /// bond's key (with its EDIV/Rand) encrypts a later link without pairing.
    @Test func legacyJustWorksAndPasskeyBondAndTheLegacyKeyEncryptsLater() async throws {
        let peer = try await Self.peer(["io": "none", "sc": "off"])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        var mark = try await peer.eventMark()
        let justWorks = await Self.pair(peer, ["--legacy", "--json"], state: state)
        #expect(justWorks.code == 0, "\(justWorks.out)\(justWorks.err)")
        var paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.string("method") == "just-works" && paired.bool("sc") == false, "\(paired)")

        try await peer.removeBonds()
        try await peer.configurePairing(["io": "display", "mitm": true, "passkey": 123])
        mark = try await peer.eventMark()
        let passkey = await Self.pair(peer, ["--legacy", "--io", "keyboard", "--passkey", "000123", "--json"], state: state)
        #expect(passkey.code == 0, "\(passkey.out)\(passkey.err)")
        #expect(passkey.out.contains("\"secureConnections\":false"), "\(passkey.out)")
        paired = try await peer.waitForEvent("paired", since: mark)
        #expect(paired.string("method") == "passkey-entry" && paired.bool("sc") == false && paired.bool("authenticated") == true, "\(paired)")

        mark = try await peer.eventMark()
        let later = try await Self.secureAndRead(peer, Self.encrypted, state: state)
        #expect(try later.value.get() == Array("encrypted".utf8), "\(later.outcome)")
        let encryption = try await peer.waitForEvent("encryption_changed", since: mark)
        #expect(encryption.string("cause") == "bond" && encryption.bool("pairing") == false && encryption.bool("sc") == false, "\(encryption)")
        // Legacy, even authenticated, is not what the SC-only value needs.
        let guarded = try await Self.secureAndRead(peer, Self.authenticatedSC, state: state)
        guard case .failure(.att(let failure)) = guarded.value else {
            Issue.record("a legacy bond read the SC-only value: \(guarded.value)")
            return
        }
        #expect(failure.code == 0x05)
    }

    // MARK: Failures

    /// A wrong passkey: the peer's confirm does not match, 0x04 on both sides, exit 1, no bond.
    @Test func wrongPasskeyFailsWithConfirmValueFailedAndStoresNothing() async throws {
        let peer = try await Self.peer(["io": "display", "sc": "only", "mitm": true, "passkey": 123456])
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let mark = try await peer.eventMark()
        let run = await Self.pair(peer, ["--io", "keyboard", "--passkey", "654321"], state: state)
        #expect(run.code == 1, "\(run.out)\(run.err)")
        #expect(run.err.contains("0x04 Confirm Value Failed"), "\(run.err)")
        let failed = try await peer.waitForEvent("pairing_failed", since: mark)
        #expect(failed.int("reason") == 0x04, "\(failed)")
        #expect(Self.storedBonds(state).isEmpty, "a failed pairing stored a bond")
        #expect(try await Self.names(peer, since: mark).contains("bonded") == false)
    }

    /// A peer whose public key is not on P-256 (the invalid-curve attack): refused with 0x0B
    /// DHKey Check Failed before any key is derived, exit 1, nothing stored.
    @Test func offCurvePublicKeyIsRefusedWithDHKeyCheckFailed() async throws {
        let peer = try await Self.peer(["io": "none"])
        try await peer.pairingFault("off_curve_key", at: "public_key")
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let mark = try await peer.eventMark()
        let run = await Self.pair(peer, [], state: state)
        #expect(run.code == 1, "\(run.out)\(run.err)")
        #expect(run.err.contains("0x0B"), "\(run.err)")
        let fault = try await peer.waitForEvent("fault", since: mark)
        #expect(fault.string("fault") == "off_curve_key", "\(fault)")
        let failed = try await peer.waitForEvent("pairing_failed", since: mark)
        #expect(failed.int("reason") == 0x0B && failed.string("by") == "peer", "\(failed)")
        #expect(Self.storedBonds(state).isEmpty)
    }

    /// A peer that falls silent mid-pairing: 30 s on the host's clock (a manual one here) after our
    /// last PDU the pairing fails with the SMP timeout, and nothing is stored.
    @Test func aPeerFallingSilentMidPairingEndsInTheSMPTimeout() async throws {
        let peer = try await Self.peer(["io": "none"])
        try await peer.pairingFault("silent", at: "confirm")
        let state = Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let clock = ManualClock()
        let central = try await BLECentral.open(peer.tcp, clock: clock)
        let mark = try await peer.eventMark()
        let bonds = try await PairingOptions.bondStore(host: central.host, environment: ["XDG_STATE_HOME": state])
        await central.host.useSecurity(HostSecurity(configuration: SecurityConfiguration(), bonds: bonds, delegate: RefusingPerson()))
        let connection = try await central.connect(peer.address)
        let host = central.host
        let pairing = Task { try await host.secure(connection, pair: true) }
        let fault = try await peer.waitForEvent("fault", since: mark)
        #expect(fault.string("fault") == "silent", "\(fault)")
        // Nothing has happened on our clock yet: the pairing is still waiting.
        #expect(clock.now.offset == .zero)
        clock.advance(by: SecurityManager.timeout + .seconds(1))
        let outcome = try await pairing.value
        guard case .failed(let failure) = outcome else {
            Issue.record("the silent pairing ended \(outcome)")
            await central.close()
            return
        }
        #expect(failure.cause == .timeout, "\(failure)")
        #expect(Self.storedBonds(state).isEmpty)
        await connection.disconnect()
        await central.close()
    }
}

/// The person during a pairing, where a terminal's user would be: answers the numeric comparison,
/// and reads a passkey hwprobe shows to type it on the other device. Records what it was shown.
final class PairingPerson: PairingDelegate, Sendable {
    private let seen = Locked<(shown: [UInt32], compared: [UInt32])>(([], []))
    private let accepts: Bool
    private let typesShownPasskey: @Sendable (UInt32) async -> Void

    init(accepts: Bool = false, typesShownPasskey: @escaping @Sendable (UInt32) async -> Void = { _ in }) {
        self.accepts = accepts
        self.typesShownPasskey = typesShownPasskey
    }

    var shown: [UInt32] { seen.withLock { $0.shown } }
    var compared: [UInt32] { seen.withLock { $0.compared } }

    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {
        seen.withLock { $0.shown.append(passkey) }
        await typesShownPasskey(passkey)
    }

    func passkey(for peer: BLEAddress) async -> UInt32? { nil }

    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool {
        seen.withLock { $0.compared.append(value) }
        return accepts
    }
}

/// Nobody at the keyboard: every prompt is refused (a run that only encrypts with a bond).
struct RefusingPerson: PairingDelegate {
    func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {}
    func passkey(for peer: BLEAddress) async -> UInt32? { nil }
    func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool { false }
}
