import BLEProtocol
import HAL
import HALFakes
import Testing
@testable import Transports

/// The host securing a central's links on its own (``CentralSecurityPolicy``, issue 29): a
/// request refused for want of security pairs and is sent once more, a bonded device is
/// encrypted as it connects, and a failure reaches the caller as the pairing's reason. The
/// peripheral is an independent `SecurityManager` played by the test (``HostSecurityTests``).
@Suite(.timeLimit(.minutes(1)))
struct HostAutoSecurityTests {
    typealias Bench = HostSecurityTests.Bench
    static let peer = HostSecurityTests.peer

    static func attSent(_ bench: Bench, _ handle: UInt16) -> [[UInt8]] {
        l2capPayloads(bench.controller.aclPackets, handle: handle, channel: L2CAPFrame.att)
    }

    static func waitForATT(_ bench: Bench, _ handle: UInt16, count: Int) async {
        await bench.controller.waitUntil { _, acl in l2capPayloads(acl, handle: handle, channel: L2CAPFrame.att).count >= count }
    }

    /// An Error Response to a Read Request of `handle`.
    static func refusal(_ code: UInt8, handle: UInt16) -> [UInt8] { [0x01, 0x0A] + LittleEndian.u16(handle) + [code] }

    @Test(arguments: [ATTErrorCode.insufficientEncryption, ATTErrorCode.insufficientAuthentication])
    func aReadRefusedForWantOfSecurityPairsThenIsSentOnceMore(code: UInt8) async throws {
        let bench = try await Bench(central: .automatic(pairFirst: false))
        let link = try await bench.connect(handle: 0x0040)
        #expect(bench.encryptions(0x0040).isEmpty && bench.smpSent(0x0040).isEmpty, "a device without a bond was secured on connect")
        let reading = Task { try await link.gatt.read(0x0003) }
        await Self.waitForATT(bench, 0x0040, count: 1)
        bench.controller.inject(ScriptedController.att(handle: 0x0040, Self.refusal(code, handle: 0x0003)))
        let (peer, replied) = await HostSecurityTests.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration())
        guard case .paired = peer.first else {
            Issue.record("the peripheral did not pair: \(peer)")
            return
        }
        // The same request again, after the link was encrypted with the peripheral's key.
        await Self.waitForATT(bench, 0x0040, count: 2)
        #expect(Self.attSent(bench, 0x0040) == [[0x0A, 0x03, 0x00], [0x0A, 0x03, 0x00]])
        #expect(bench.encryptions(0x0040).map(\.ltk) == replied)
        bench.controller.inject(ScriptedController.att(handle: 0x0040, [0x0B, 0x42, 0x43]))
        #expect(try await reading.value == [0x42, 0x43])
        #expect(bench.bonds.bond(for: Self.peer) != nil)
    }

    @Test func aSecondRefusalAfterPairingIsTheAnswerAndTheRequestIsNotSentAThirdTime() async throws {
        let bench = try await Bench(central: .automatic(pairFirst: false))
        let link = try await bench.connect(handle: 0x0040)
        let reading = Task { try await link.gatt.read(0x0003) }
        await Self.waitForATT(bench, 0x0040, count: 1)
        bench.controller.inject(ScriptedController.att(handle: 0x0040, Self.refusal(0x0F, handle: 0x0003)))
        _ = await HostSecurityTests.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration())
        await Self.waitForATT(bench, 0x0040, count: 2)
        // Just Works gave an unauthenticated key; the device wants more and says 0x05.
        bench.controller.inject(ScriptedController.att(handle: 0x0040, Self.refusal(0x05, handle: 0x0003)))
        do {
            _ = try await reading.value
            Issue.record("the read succeeded")
        } catch let error as BLEError {
            #expect(error == .att(ATTFailure(code: 0x05, handle: 0x0003, requestOpcode: 0x0A)))
        }
        #expect(Self.attSent(bench, 0x0040).count == 2)
    }

    @Test func aPairingThatFailsIsTheRequestsErrorAndKeepsNothing() async throws {
        let bench = try await Bench(io: .keyboardOnly, mitm: true, user: HostSecurityTests.User(passkey: 654_321),
                                    central: .automatic(pairFirst: false))
        let link = try await bench.connect(handle: 0x0040)
        let reading = Task { try await link.gatt.read(0x0003) }
        await Self.waitForATT(bench, 0x0040, count: 1)
        bench.controller.inject(ScriptedController.att(handle: 0x0040, Self.refusal(0x05, handle: 0x0003)))
        _ = await HostSecurityTests.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration(ioCapability: .keyboardOnly),
                                                   passkey: 123_456)
        do {
            _ = try await reading.value
            Issue.record("the read succeeded")
        } catch let error as BLEError {
            guard case .pairingFailed(let failure) = error else {
                Issue.record("not a pairing failure: \(error)")
                return
            }
            #expect(failure.reason == .confirmValueFailed)
            #expect(error.description.contains("0x04"))
        }
        #expect(Self.attSent(bench, 0x0040).count == 1, "the request was sent again after a failed pairing")
        #expect(bench.bonds.bonds.withLock { $0.isEmpty })
    }

    static func storedBond() throws -> Bond {
        let ltk = try #require(SecurityKey(bytes: Array(repeating: 0x5A, count: 16)))
        return Bond(identity: peer, irk: nil, centralKey: EncryptionKey(ltk: ltk), peripheralKey: EncryptionKey(ltk: ltk),
                    isAuthenticated: false, isSecureConnections: true, keySize: 16)
    }

    @Test func aBondedDeviceIsEncryptedWithItsKeyBeforeTheConnectionIsHandedOver() async throws {
        let bench = try await Bench(central: .automatic(pairFirst: false))
        let bond = try Self.storedBond()
        try bench.bonds.keep(bond)
        let connecting = Task { try await bench.connect(handle: 0x0041) }
        await bench.controller.waitUntil { commands, _ in !Bench.encryptions(commands, 0x0041).isEmpty }
        #expect(bench.encryptions(0x0041) == [try #require(bond.centralKey)])
        bench.encryptionChanged(0x0041)
        _ = try await connecting.value
        #expect(await bench.host.linkSecurity(0x0041) == bond.security)
        #expect(bench.smpSent(0x0041).isEmpty, "the host paired instead of using the bond")
    }

    @Test func aDeviceThatRefusesItsBondsKeyEndsTheConnectionWithWhatToDo() async throws {
        let bench = try await Bench(central: .automatic(pairFirst: false))
        try bench.bonds.keep(try Self.storedBond())
        let connecting = Task { try await bench.connect(handle: 0x0041) }
        await bench.controller.waitUntil { commands, _ in !Bench.encryptions(commands, 0x0041).isEmpty }
        bench.encryptionChanged(0x0041, status: 0x06) // PIN or Key Missing: the device forgot the bond
        await bench.controller.waitForCommand(0x0406)
        bench.controller.inject(ScriptedController.disconnectionComplete(handle: 0x0041, reason: 0x16))
        do {
            _ = try await connecting.value
            Issue.record("the connection was handed over")
        } catch let error as BLEError {
            #expect(error == .bondRejected(Self.peer, status: 0x06))
            #expect(error.description.contains("bonds --hci URI --remove \(Self.peer)"))
        }
    }

    @Test func withPairFirstTheDeviceIsPairedBeforeAnyRequest() async throws {
        let bench = try await Bench(central: .automatic(pairFirst: true))
        let connecting = Task { try await bench.connect(handle: 0x0040) }
        let (peer, _) = await HostSecurityTests.playPeripheral(bench, handle: 0x0040, configuration: SecurityConfiguration())
        guard case .paired = peer.first else {
            Issue.record("the peripheral did not pair: \(peer)")
            return
        }
        _ = try await connecting.value
        #expect(await bench.host.linkSecurity(0x0040).isEncrypted)
        #expect(Self.attSent(bench, 0x0040).isEmpty)
    }

    /// A scale driver's connection sees a failed pairing as the HAL's `notSecured`, with the
    /// pairing's own words (weigh then exits 1 with them, not 3).
    @Test func aFailedPairingReachesTheScaleLayerAsNotSecured() {
        let failure = PairingFailure(.received(.confirmValueFailed), "the passkey did not match")
        #expect(BLEError.pairingFailed(failure).scaleError() == .notSecured(failure.description))
        #expect(BLEError.bondRejected(Self.peer, status: 0x06).scaleError().description.contains("--remove"))
    }
}
