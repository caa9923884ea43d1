import BLEProtocol
import HAL
import HALFakes
import Peripherals
import SerialTestSupport
import Testing
import Transports
import VirtualController

/// A replay of a connection that was paired and encrypted (issue 29, item 3): the recording kept
/// the method and that the link was encrypted, never a key, and our host on `replay:` gets the
/// same result as the live run: its read refused for want of security, a simulated pairing with
/// the recorded method, the link encrypted at the recorded level, the value read.
@Suite struct ReplaySecurityTests {
    static let device = BLEAddress(string: "C0:5E:C0:00:00:01/random")!
    /// A read of handle 0x0003 refused with Insufficient Authentication (0x05), then, after the
    /// security records, read again and answered `2A`, as `gatt --read` with automatic pairing
    /// records it.
    static func cassette(_ security: [BLECassette.SecurityRecord], secondRead: Bool = true) -> BLECassette {
        var att: [BLECassette.ATTRecord] = [
            .init(at: .milliseconds(10), direction: .toPeripheral, pdu: [0x0A, 0x03, 0x00]),
            .init(at: .milliseconds(20), direction: .fromPeripheral, pdu: [0x01, 0x0A, 0x03, 0x00, 0x05]),
        ]
        if secondRead {
            att += [.init(at: .milliseconds(500), direction: .toPeripheral, pdu: [0x0A, 0x03, 0x00]),
                    .init(at: .milliseconds(510), direction: .fromPeripheral, pdu: [0x0B, 0x2A])]
        }
        let advertising = BLECassette.AdvertisingRecord(at: .zero, kind: .connectable, rssi: -50, data: [0x02, 0x01, 0x06])
        return BLECassette(peripherals: [
            .init(address: device, advertising: [advertising], connections: [.init(at: .seconds(1), att: att, security: security)]),
        ])
    }

    static let paired: [BLECassette.SecurityRecord] = [
        .init(at: .milliseconds(100), event: .pairing(method: "just-works", secureConnections: true, deviceKeys: ["irk", "identity-address"], hostKeys: [])),
        .init(at: .milliseconds(200), event: .encrypted),
    ]

    /// Types the passkey the replayed device showed (the replay's warning says it).
    struct Person: PairingDelegate {
        let warnings: Locked<[String]>
        func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {}
        func passkey(for peer: BLEAddress) async -> UInt32? {
            var typed: UInt32?
            for warning in warnings.value where warning.contains("shows passkey") {
                for word in warning.split(separator: " ") where word.count == 6 {
                    if let number = UInt32(word) { typed = number }
                }
            }
            return typed
        }
        func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool { true }
    }

    struct Outcome: Sendable {
        var value: Result<[UInt8], BLEError>
        var security: LinkSecurity
        var recorded: BLECassette
        var warnings: [String]
    }

    /// `gatt --read 0x0003` as the commands run it (automatic pairing), on `replay:` of `cassette`.
    func read(_ cassette: BLECassette, io: IOCapability = .keyboardDisplay, bonds: RunBonds = RunBonds()) async throws -> Outcome {
        let clock = ManualClock()
        let warnings = Locked<[String]>([])
        let recorder = CassetteRecorder(clock: clock)
        let outcome = await drive(clock) { () -> Result<(Result<[UInt8], BLEError>, LinkSecurity), BLEError> in
            do throws(BLEError) {
                let central = try await CassettePlayback.central(cassette, uri: .replay(path: "(test)"), clock: clock, timing: .immediate,
                                                                 tap: recorder, warn: { message in warnings.withLock { $0.append(message) } })
                await central.host.useSecurity(HostSecurity(configuration: SecurityConfiguration(ioCapability: io), bonds: bonds,
                                                            delegate: Person(warnings: warnings), central: .automatic(pairFirst: false)))
                let connection = try await central.connect(Self.device, timeout: .seconds(5))
                let value: Result<[UInt8], BLEError>
                do throws(BLEError) { value = .success(try await connection.gatt.read(0x0003)) } catch { value = .failure(error) }
                let security = await central.host.linkSecurity(connection.handle)
                await central.close()
                return .success((value, security))
            } catch {
                return .failure(error)
            }
        }
        let (value, security) = try #require(outcome).get()
        return Outcome(value: value, security: security, recorded: recorder.cassette, warnings: warnings.value)
    }

    @Test func aRecordedJustWorksPairingIsSimulatedAndTheProtectedValueRead() async throws {
        let outcome = try await read(Self.cassette(Self.paired))
        #expect(try outcome.value.get() == [0x2A])
        #expect(outcome.security == LinkSecurity(isEncrypted: true, isAuthenticated: false, isSecureConnections: true, keySize: 16))
        // Recording the replay gives the same story: the pairing by the recorded method, then the encryption.
        let events = outcome.recorded.peripheral(Self.device)?.connections.first?.security.map(\.event) ?? []
        #expect(events.first == BLECassette.SecurityRecord.Event.pairing(method: "just-works", secureConnections: true,
                                                                                 deviceKeys: ["irk", "identity-address"], hostKeys: []))
        #expect(events.contains(BLECassette.SecurityRecord.Event.encrypted))
    }

    @Test func aRecordedPasskeyPairingGivesAnAuthenticatedLinkWithThePasskeyTheReplayShows() async throws {
        let security: [BLECassette.SecurityRecord] = [
            .init(at: .milliseconds(100), event: .pairing(method: "passkey", secureConnections: true, deviceKeys: [], hostKeys: [])),
            .init(at: .milliseconds(200), event: .encrypted),
        ]
        let outcome = try await read(Self.cassette(security), io: .keyboardOnly)
        #expect(try outcome.value.get() == [0x2A])
        #expect(outcome.security.isAuthenticated && outcome.security.isSecureConnections)
        #expect(outcome.warnings.contains { $0.contains("shows passkey") })
    }

    @Test func aRecordedLegacyPairingGivesALegacyLink() async throws {
        let security: [BLECassette.SecurityRecord] = [
            .init(at: .milliseconds(100), event: .pairing(method: "just-works", secureConnections: false, deviceKeys: ["ltk", "ediv-rand"], hostKeys: [])),
            .init(at: .milliseconds(200), event: .encrypted),
        ]
        let outcome = try await read(Self.cassette(security))
        #expect(try outcome.value.get() == [0x2A])
        #expect(outcome.security.isEncrypted && !outcome.security.isSecureConnections && !outcome.security.isAuthenticated)
        let events = outcome.recorded.peripheral(Self.device)?.connections.first?.security.map(\.event) ?? []
        guard case .pairing(_, _, let deviceKeys, _)? = events.first else {
            Issue.record("no pairing recorded from the replay: \(events)")
            return
        }
        #expect(deviceKeys == ["ltk", "ediv-rand"], "the replayed device sends the kinds of keys the recorded one sent")
    }

    @Test func aRecordedPairingFailureFailsWithTheRecordedReason() async throws {
        let failed = [BLECassette.SecurityRecord(at: .milliseconds(100), event: .pairingFailed(reason: 0x03))]
        let outcome = try await read(Self.cassette(failed, secondRead: false))
        guard case .failure(.pairingFailed(let failure)) = outcome.value else {
            Issue.record("expected the pairing to fail, got \(outcome.value)")
            return
        }
        #expect(failure.cause == .received(PairingFailureReason(rawValue: 0x03)))
        #expect(!outcome.security.isEncrypted)
    }

    @Test func withNoSecurityRecordedPairingIsNotSupported() async throws {
        let outcome = try await read(Self.cassette([], secondRead: false))
        guard case .failure(.pairingFailed(let failure)) = outcome.value else {
            Issue.record("expected the pairing to fail, got \(outcome.value)")
            return
        }
        #expect(failure.reason == PairingFailureReason(rawValue: 0x05))
    }

    /// Our host keeps a bond for the device (from the live run): it encrypts as it connects.
    static func bonded() throws -> RunBonds {
        let bonds = RunBonds()
        try bonds.keep(Bond(identity: device, irk: nil, centralKey: EncryptionKey(ltk: SecurityKey(number: 0xB0D), ediv: 0x77, rand: 0x1234),
                            peripheralKey: nil, isAuthenticated: true, isSecureConnections: true, keySize: 16))
        return bonds
    }

    /// A connection recorded encrypted with a bond (no pairing, the value read at once).
    static func encryptedWithABond() -> BLECassette {
        var cassette = cassette([.init(at: .milliseconds(5), event: .encrypted)], secondRead: false)
        cassette.peripherals[0].connections[0].att = [
            .init(at: .milliseconds(10), direction: .toPeripheral, pdu: [0x0A, 0x03, 0x00]),
            .init(at: .milliseconds(20), direction: .fromPeripheral, pdu: [0x0B, 0x2A]),
        ]
        return cassette
    }

    @Test func aHostWithABondEncryptsOnAConnectionRecordedEncryptedAtItsBondsLevel() async throws {
        let outcome = try await read(Self.encryptedWithABond(), bonds: try Self.bonded())
        #expect(try outcome.value.get() == [0x2A])
        #expect(outcome.security == LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16))
    }

    @Test func aBondIsRefusedOnAConnectionNeverRecordedEncrypted() async throws {
        var cassette = Self.encryptedWithABond()
        cassette.peripherals[0].connections[0].security = []
        let bonds = try Self.bonded()
        // As a device that forgot the pairing: the connection fails as it is made.
        await #expect(throws: BLEError.bondRejected(Self.device, status: 0x06)) { try await read(cassette, bonds: bonds) }
    }

    // MARK: a protected value, served only on a secured link (`serve replay:`)

    /// What the replayed device answers to `request` on a link told `level` (as `serve`'s
    /// PeripheralHost tells it), asked `times` times.
    func answers(_ level: SecurityLevel?, times: Int = 2, security: [BLECassette.SecurityRecord] = paired) -> [[UInt8]] {
        var device = ReplayPeripheral(Self.cassette(security).peripherals[0], timing: .immediate)
        _ = device.linkUp(VirtualLinkParameters(central: BLEAddress(string: "5A:11:C0:00:00:09")!, interval: 24, latency: 0, supervisionTimeout: 500),
                          at: .zero)
        if let level { _ = device.securityChanged(level, at: .zero) }
        var answers: [[UInt8]] = []
        for _ in 0..<times {
            for case .send(let frame) in device.received(L2CAPFrame(channel: L2CAPFrame.att, payload: [0x0A, 0x03, 0x00]), at: .zero) {
                answers.append(frame.payload)
            }
        }
        return answers
    }

    @Test func aProtectedValueIsRefusedAsRecordedUntilTheLinkIsSecured() {
        #expect(answers(nil) == [[0x01, 0x0A, 0x03, 0x00, 0x05], [0x01, 0x0A, 0x03, 0x00, 0x05]], "asking again does not get past it")
        #expect(answers(.encrypted, times: 1) == [[0x0B, 0x2A]], "a link secured first is never refused")
        #expect(answers(.encrypted, times: 2) == [[0x0B, 0x2A], [0x0B, 0x2A]])
    }

    @Test func aValueRecordedAfterAnAuthenticatedPairingNeedsAnAuthenticatedLink() {
        let passkey: [BLECassette.SecurityRecord] = [
            .init(at: .milliseconds(100), event: .pairing(method: "passkey", secureConnections: true, deviceKeys: [], hostKeys: [])),
            .init(at: .milliseconds(200), event: .encrypted),
        ]
        #expect(answers(.encrypted, times: 1, security: passkey) == [[0x01, 0x0A, 0x03, 0x00, 0x05]])
        #expect(answers(.authenticated, times: 1, security: passkey) == [[0x0B, 0x2A]])
    }

    @Test func aHostThatCannotPairIsRefusedEveryTimeOnReplay() async throws {
        let clock = ManualClock()
        let result = await drive(clock) { () -> Result<[String], BLEError> in
            do throws(BLEError) {
                let central = try await CassettePlayback.central(Self.cassette(Self.paired), uri: .replay(path: "(test)"), clock: clock, timing: .immediate)
                let connection = try await central.connect(Self.device, timeout: .seconds(5))
                var outcomes: [String] = []
                for _ in 0..<2 {
                    do throws(BLEError) { outcomes.append(Hex.string(try await connection.gatt.read(0x0003), .lower)) } catch { outcomes.append("\(error)") }
                }
                await central.close()
                return .success(outcomes)
            } catch {
                return .failure(error)
            }
        }
        let outcomes = try #require(result).get()
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.contains("0x05") }, "\(outcomes)")
    }

    // MARK: the controller's encryption start, by hand

    /// A peripheral whose side of the encryption start gives `answer`.
    struct KeyedPeripheral: VirtualPeripheral {
        let address = BLEAddress(string: "C0:5E:C0:00:00:02/random")!
        let advertising = VirtualAdvertising(form: .legacy(advertisingData: [0x02, 0x01, 0x06], scanResponse: []), firstEvent: .milliseconds(50))
        let answer: VirtualEncryptionKey
        var connected = false
        var isAdvertising: Bool { !connected }
        var nextDeadline: Duration? { nil }
        mutating func advance(to now: Duration) -> [PeripheralAction] { [] }
        mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] { connected = true; return [] }
        mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] { [] }
        mutating func linkDown(reason: UInt8, at now: Duration) { connected = false }
        mutating func encryptionRequested(ediv: UInt16, rand: UInt64, at now: Duration) -> VirtualEncryptionKey { answer }
    }

    static let key = SecurityKey(number: 0x1234)

    /// LE Enable Encryption twice on a new link with `answer` on the peripheral's side; the events
    /// after each (code and parameters), Command Status left out.
    func encrypt(_ answer: VirtualEncryptionKey) async throws -> [[HCIEventPacket]] {
        let clock = ManualClock()
        let peripheral = KeyedPeripheral(answer: answer)
        let controller = VirtualController(peripherals: [peripheral], clock: clock, configuration: ControllerConfiguration())
        let host = RawHost(controller)
        let enable = SecurityHCI.enableEncryption(handle: 0x0040, key: EncryptionKey(ltk: Self.key, ediv: 0x0102, rand: 7))
        return try await withSerialExecutor { () async throws -> [[HCIEventPacket]] in
            try await host.initialise()
            #expect(try await host.status(enable) == 0x02, "no link yet: Unknown Connection Identifier")
            _ = try await host.status(.leCreateConnection(peer: peripheral.address, scanInterval: 0x60, scanWindow: 0x60, ownAddressType: 0,
                                                          minInterval: 0x18, maxInterval: 0x28, latency: 0, supervisionTimeout: 0x1F4))
            await advance(clock, to: .milliseconds(150))
            _ = try await host.drain()
            var rounds: [[HCIEventPacket]] = []
            for _ in 0..<2 {
                try await host.write(HCIPacket.command(enable).h4Bytes)
                rounds.append(try await host.events().filter { $0.code != 0x0F })
            }
            return rounds
        }
    }

    @Test func theSameKeyEncryptsAndASecondStartIsAKeyRefresh() async throws {
        let rounds = try await encrypt(.key(Self.key))
        #expect(rounds[0].map(\.code) == [0x08] && rounds[0].first?.parameters == [0x00, 0x40, 0x00, 0x01])
        #expect(rounds[1].map(\.code) == [0x30] && rounds[1].first?.parameters == [0x00, 0x40, 0x00])
    }

    @Test func aSimulatedLinkTakesAnyKey() async throws {
        let rounds = try await encrypt(.simulated)
        #expect(rounds[0].first?.parameters == [0x00, 0x40, 0x00, 0x01])
    }

    @Test func noKeyIsPinOrKeyMissingAndTheLinkStaysUnencrypted() async throws {
        let rounds = try await encrypt(.none)
        #expect(rounds[0].map(\.code) == [0x08] && rounds[0].first?.parameters == [0x06, 0x40, 0x00, 0x00])
        #expect(rounds[1].map(\.code) == [0x08], "still not encrypted: no key refresh")
    }

    @Test func anotherKeyEndsTheLinkWithAMICFailure() async throws {
        let rounds = try await encrypt(.key(SecurityKey(number: 0x4321)))
        #expect(rounds[0].map(\.code) == [0x05] && rounds[0].first?.parameters == [0x00, 0x40, 0x00, 0x3D])
    }
}
