import BLEProtocol
import HAL
import HALFakes
import Synchronization
import Testing
@testable import Transports

/// The host's Security Manager routing (issue 29, item 1), against a scripted controller on the
/// manual clock. The peripheral at the other end is a second, independent `SecurityManager` value
/// played by the test: what the host sends on CID 0x0006 is fed to it and its PDUs are injected
/// back, so a pairing only succeeds if the host routed every PDU, encrypted with the key the
/// peripheral derived, and fed the controller's events back in.
@Suite(.timeLimit(.minutes(1)))
struct HostSecurityTests {
    static let peer = BLEAddress(string: "C0:FF:EE:00:4F:2A/random")!

    /// Bonds in memory, as the bond store would keep them.
    final class MemoryBonds: BondKeeper {
        let bonds = Mutex<[Bond]>([])
        func bond(for address: BLEAddress) -> Bond? { bonds.withLock { $0.first { $0.matches(address) } } }
        func keep(_ bond: Bond) throws(BondStoreError) { bonds.withLock { $0.append(bond) } }
    }

    /// The person at the host's keyboard: types `passkey`, answers comparisons with `accept`.
    struct User: PairingDelegate {
        var passkey: UInt32?
        var accept = false
        func displayPasskey(_ passkey: UInt32, peer: BLEAddress) async {}
        func passkey(for peer: BLEAddress) async -> UInt32? { passkey }
        func confirm(_ value: UInt32, peer: BLEAddress) async -> Bool { accept }
    }

    struct Bench {
        let clock = ManualClock()
        // Credits enough for every fragment of a pairing: nobody plays Number Of Completed Packets here.
        let controller = ScriptedController(aclCount: 250)
        let host: HCIHost
        let bonds = MemoryBonds()

        init(io: IOCapability = .noInputNoOutput, mitm: Bool = false, user: User = User(), central: CentralSecurityPolicy = .manual) async throws {
            host = HCIHost(stream: controller, clock: clock)
            try await host.start()
            await host.useSecurity(HostSecurity(configuration: SecurityConfiguration(ioCapability: io, requiresMITM: mitm), bonds: bonds, delegate: user,
                                                central: central))
        }

        func connect(handle: UInt16) async throws -> BLEConnection {
            let host = host
            let before = controller.commands.filter { $0.opcode == 0x200D }.count
            let attempt = Task { try await host.connect(to: HostSecurityTests.peer) }
            await controller.waitForCommand(0x200D, count: before + 1)
            controller.inject(ScriptedController.connectionComplete(handle: handle, peer: HostSecurityTests.peer))
            return try await attempt.value
        }

        func smpSent(_ handle: UInt16) -> [[UInt8]] { Self.smp(controller.aclPackets, handle) }

        /// The SMP PDUs the host sent on `handle`, reassembled (a public key takes three fragments).
        static func smp(_ packets: [ACLPacket], _ handle: UInt16) -> [[UInt8]] {
            var reassembler = ACLReassembler()
            return packets.filter { $0.handle == handle }.compactMap { reassembler.add($0) }
                .filter { $0.channel == L2CAPFrame.securityManager }.map(\.payload)
        }

        /// The LE Enable Encryption commands the host sent for `handle`, as keys.
        func encryptions(_ handle: UInt16) -> [EncryptionKey] { Self.encryptions(controller.commands, handle) }

        static func encryptions(_ commands: [HCICommand], _ handle: UInt16) -> [EncryptionKey] {
            commands.filter { $0.opcode == 0x2019 && $0.parameters.count == 28 }.compactMap { command in
                let p = command.parameters
                guard UInt16(p[0]) | UInt16(p[1]) << 8 == handle, let ltk = SecurityKey(littleEndian: Array(p[12..<28])) else { return nil }
                var rand: UInt64 = 0
                for index in 0..<8 { rand |= UInt64(p[2 + index]) << (8 * UInt64(index)) }
                return EncryptionKey(ltk: ltk, ediv: UInt16(p[10]) | UInt16(p[11]) << 8, rand: rand)
            }
        }

        func encryptionChanged(_ handle: UInt16, status: UInt8 = 0) {
            controller.inject(ScriptedController.event(0x08, [status] + LittleEndian.u16(handle) + [status == 0 ? 1 : 0]))
        }
    }

    /// The peripheral's side: a Security Manager fed what the host sent, its PDUs injected back.
    /// Returns its outcome once it reports one (or the host stops sending).
    static func playPeripheral(_ bench: Bench, handle: UInt16, configuration: SecurityConfiguration,
                               passkey: UInt32? = nil) async -> (peer: [SecurityEffect], keys: [SecurityKey]) {
        let local = await bench.host.localAddress ?? BLEAddress(string: "A0:A0:A0:00:00:01")!
        var manager = SecurityManager(role: .peripheral, configuration: configuration, localAddress: Self.peer, peerAddress: local)
        var seenPDUs = 0
        var seenEncryptions = 0
        var reported: [SecurityEffect] = []
        var replied: [SecurityKey] = []
        func apply(_ effects: [SecurityEffect]) -> [SecurityEffect] {
            var more: [SecurityEffect] = []
            for effect in effects {
                switch effect {
                case .send(let pdu): bench.controller.inject(ScriptedController.l2cap(handle: handle, channel: L2CAPFrame.securityManager, pdu.encoded))
                case .requestPasskey: more += manager.handle(.passkeyEntered(passkey ?? 0), now: .zero)
                case .replyLTK(let key): replied.append(key)
                case .paired, .pairingFailed: reported.append(effect)
                default: break
                }
            }
            return more
        }
        for _ in 0..<200 where reported.isEmpty { // SC Passkey Entry takes 20 rounds of four PDUs
            let (pduCount, encryptionCount) = (seenPDUs, seenEncryptions)
            await bench.controller.waitUntil { commands, acl in
                Bench.smp(acl, handle).count > pduCount
                    || Bench.encryptions(commands, handle).count > encryptionCount
            }
            var pending: [SecurityEffect] = []
            let pdus = bench.smpSent(handle)
            for pdu in pdus[seenPDUs...] { pending += manager.handle(.received(pdu), now: .zero) }
            seenPDUs = pdus.count
            if bench.encryptions(handle).count > seenEncryptions {
                seenEncryptions = bench.encryptions(handle).count
                var answer = apply(manager.handle(.ltkRequested(ediv: 0, rand: 0), now: .zero))
                while !answer.isEmpty { answer = apply(answer) }
                if !replied.isEmpty {
                    bench.encryptionChanged(handle)
                    pending += manager.handle(.encryptionChanged(status: 0, enabled: true), now: .zero)
                }
            }
            while !pending.isEmpty { pending = apply(pending) }
        }
        return (reported, replied)
    }

    @Test func justWorksPairsThroughTheHostAndEncryptsWithThePeripheralsKey() async throws {
        let bench = try await Bench()
        let link = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(link) }
        let (peer, replied) = await Self.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration())
        let outcome = try await securing.value
        guard case .paired(let paired) = outcome, case .paired(let peerPaired) = peer.first else {
            Issue.record("no pairing: host \(outcome), peripheral \(peer)")
            return
        }
        #expect(paired.method == .justWorks && peerPaired.method == .justWorks)
        #expect(paired.security.isSecureConnections && !paired.security.isAuthenticated && paired.security.level == 2)
        // The host encrypted with the very key the peripheral derived on its own.
        #expect(bench.encryptions(0x0040).map(\.ltk) == replied)
        #expect(await host.linkSecurity(0x0040) == paired.security)
        // Both bonded: the host kept the bond, keyed by the peer's address.
        let kept = try #require(bench.bonds.bond(for: Self.peer))
        #expect(kept.centralKey?.ltk == replied.first)
    }

    @Test func aBondedPeerIsEncryptedWithItsStoredKeyWithoutPairing() async throws {
        let bench = try await Bench()
        let first = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(first) }
        _ = await Self.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration())
        _ = try await securing.value
        let bond = try #require(bench.bonds.bond(for: Self.peer))
        bench.controller.inject(ScriptedController.disconnectionComplete(handle: 0x0040, reason: 0x13))
        // Met again: the controller reuses a handle or not; here a new one.
        let second = try await bench.connect(handle: 0x0041)
        let again = Task { try await host.secure(second) }
        await bench.controller.waitUntil { commands, _ in !Bench.encryptions(commands, 0x0041).isEmpty }
        #expect(bench.encryptions(0x0041) == [try #require(bond.centralKey)])
        bench.encryptionChanged(0x0041)
        let outcome = try await again.value
        #expect(outcome == .encrypted(bond.security))
        #expect(bench.smpSent(0x0041).isEmpty, "the host paired again instead of using the bond")
    }

    @Test func encryptingWithABondThatTheControllerNeverConfirmsEndsAfterThirtySeconds() async throws {
        let bench = try await Bench()
        let ltk = try #require(SecurityKey(bytes: Array(repeating: 0x5A, count: 16)))
        try bench.bonds.keep(Bond(identity: Self.peer, irk: nil, centralKey: EncryptionKey(ltk: ltk), peripheralKey: EncryptionKey(ltk: ltk),
                                  isAuthenticated: false, isSecureConnections: true, keySize: 16))
        let link = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(link) }
        await bench.controller.waitUntil { commands, _ in !Bench.encryptions(commands, 0x0040).isEmpty }
        for _ in 0..<2000 { await Task.yield() }
        bench.clock.advance(by: .seconds(31))
        let outcome = try await securing.value
        guard case .failed(let failure) = outcome, case .timeout = failure.cause else {
            Issue.record("not a timeout: \(outcome)")
            return
        }
    }

    @Test func passkeyEntryAuthenticatesWhenBothSidesTypeTheSamePasskey() async throws {
        let bench = try await Bench(io: .keyboardOnly, mitm: true, user: User(passkey: 123_456))
        let link = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(link, pair: true) }
        let (peer, _) = await Self.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration(ioCapability: .keyboardOnly),
                                                  passkey: 123_456)
        let outcome = try await securing.value
        guard case .paired(let paired) = outcome else {
            Issue.record("no pairing: host \(outcome), peripheral \(peer)")
            return
        }
        #expect(paired.method == .passkeyEntry(.neither))
        #expect(paired.security.level == 4)
    }

    @Test func aWrongPasskeyFailsWithConfirmValueFailedAndKeepsNothing() async throws {
        let bench = try await Bench(io: .keyboardOnly, mitm: true, user: User(passkey: 654_321))
        let link = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(link, pair: true) }
        let (peer, _) = await Self.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration(ioCapability: .keyboardOnly),
                                                  passkey: 123_456)
        let outcome = try await securing.value
        guard case .failed(let failure) = outcome else {
            Issue.record("the pairing did not fail: \(outcome)")
            return
        }
        #expect(failure.reason == .confirmValueFailed)
        if case .pairingFailed = peer.first {} else { Issue.record("the peripheral did not fail: \(peer)") }
        #expect(bench.bonds.bonds.withLock { $0.isEmpty })
        #expect(bench.encryptions(0x0040).isEmpty)
    }

    @Test func theSMPTimeoutOnTheInjectedClockEndsAPairingThePeerAbandons() async throws {
        let bench = try await Bench()
        let link = try await bench.connect(handle: 0x0040)
        let host = bench.host
        let securing = Task { try await host.secure(link) }
        await bench.controller.waitUntil { _, acl in !Bench.smp(acl, 0x0040).isEmpty }
        #expect(bench.smpSent(0x0040).first?.first == 0x01, "the host did not send a Pairing Request")
        // The peripheral never answers: 30 s later the pairing has failed.
        for _ in 0..<2000 { await Task.yield() }
        bench.clock.advance(by: .seconds(31))
        let outcome = try await securing.value
        guard case .failed(let failure) = outcome, case .timeout = failure.cause else {
            Issue.record("not a timeout: \(outcome)")
            return
        }
    }

    @Test func asPeripheralTheHostAnswersTheLTKRequestWithTheKeyTheCentralEncryptsWith() async throws {
        let bench = try await Bench()
        let host = bench.host
        let events = await host.peripheralRole()
        let watching = Task { () -> [PeripheralEvent] in
            var seen: [PeripheralEvent] = []
            for await event in events {
                seen.append(event)
                if case .secured = event { break }
            }
            return seen
        }
        let handle: UInt16 = 0x0050
        bench.controller.inject(PeripheralRoleTests.connectionComplete(handle: handle, peer: PeripheralRoleTests.central, role: 1))
        let local = await host.localAddress ?? BLEAddress(string: "A0:A0:A0:00:00:01")!
        var central = SecurityManager(role: .central, configuration: SecurityConfiguration(), localAddress: PeripheralRoleTests.central,
                                      peerAddress: local)
        var centralKey: SecurityKey?
        var reported: [SecurityEffect] = []
        var seenPDUs = 0
        var seenReplies = 0
        var pending = central.handle(.pair, now: .zero)
        for _ in 0..<100 where reported.isEmpty {
            for effect in pending {
                switch effect {
                case .send(let pdu):
                    bench.controller.inject(ScriptedController.l2cap(handle: handle, channel: L2CAPFrame.securityManager, pdu.encoded))
                case .startEncryption(let key):
                    centralKey = key.ltk
                    // The controller asks the peripheral's host for the key (LE Long Term Key Request).
                    bench.controller.inject(ScriptedController.event(0x3E, [0x05] + LittleEndian.u16(handle) + LittleEndian.u64(key.rand)
                                                                     + LittleEndian.u16(key.ediv)))
                case .paired, .pairingFailed: reported.append(effect)
                default: break
                }
            }
            pending = []
            guard reported.isEmpty else { break }
            let (pduCount, replyCount) = (seenPDUs, seenReplies)
            await bench.controller.waitUntil { commands, acl in
                Bench.smp(acl, handle).count > pduCount || commands.filter { $0.opcode == 0x201A }.count > replyCount
            }
            let pdus = bench.smpSent(handle)
            for pdu in pdus[seenPDUs...] { pending += central.handle(.received(pdu), now: .zero) }
            seenPDUs = pdus.count
            let replies = bench.controller.commands.filter { $0.opcode == 0x201A }
            if replies.count > seenReplies {
                seenReplies = replies.count
                let answered = replies.last.flatMap { SecurityKey(littleEndian: Array($0.parameters.dropFirst(2))) }
                #expect(answered == centralKey, "the host answered the LTK Request with another key")
                bench.encryptionChanged(handle)
                pending += central.handle(.encryptionChanged(status: 0, enabled: true), now: .zero)
            }
        }
        guard case .paired(let paired) = reported.first else {
            Issue.record("the central did not pair: \(reported)")
            return
        }
        let seen = await watching.value
        #expect(seen.contains(.securityChanged(handle: handle, paired.security)))
        guard case .secured(handle, .paired(let hostPaired)) = seen.last else {
            Issue.record("the peripheral role reported no pairing: \(seen)")
            return
        }
        #expect(hostPaired.method == .justWorks && hostPaired.security == paired.security)
        #expect(bench.bonds.bond(for: PeripheralRoleTests.central)?.peripheralKey?.ltk == centralKey)
    }

    /// A central may connect before the host has read the enable's Command Complete (bumble's
    /// central did, when it was already waiting for the advertisement): the link's Security
    /// Manager must still know our side by the address advertised from, or f5/f6 disagree with
    /// the central's and the DHKey check fails (0x0B); and legacy advertising, which the
    /// connection ended, must not be thought still on.
    @Test(arguments: [false, true])
    func aCentralConnectingBeforeTheEnableIsAnsweredKnowsUsByTheAdvertisedAddress(extended: Bool) async throws {
        let bench = try await Bench()
        let host = bench.host
        let events = await host.peripheralRole()
        defer { _ = events }
        let address = BLEAddress(string: "C2:11:22:33:44:55/random")!
        let central = BLEAddress(string: "C4:00:00:00:00:01/random")!
        let form: AdvertisingSetup.Form = extended ? .extended(data: [2, 1, 6]) : .legacy(advertisingData: [2, 1, 6], scanResponse: [])
        let enable: UInt16 = extended ? 0x2039 : 0x200A
        bench.controller.hold(enable)
        let advertising = Task { try await host.advertise(AdvertisingSetup(form: form, randomAddress: address)) }
        await bench.controller.waitForCommand(enable)
        let command = try #require(bench.controller.commands.last { $0.opcode == enable })
        bench.controller.inject(PeripheralRoleTests.connectionComplete(handle: 0x0050, peer: central, role: 0x01)
                                + bench.controller.commandComplete(for: command))
        try await advertising.value
        #expect(await host.securedLinks[0x0050]?.manager.localAddress == address)
        #expect(await host.securedLinks[0x0050]?.manager.peerAddress == central)
        #expect(await host.isAdvertising == extended, "legacy advertising ends with the connection")
    }
}
