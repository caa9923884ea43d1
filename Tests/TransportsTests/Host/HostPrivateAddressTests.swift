import BLEProtocol
import HAL
import HALFakes
import Testing
@testable import Transports

/// The host's side of resolvable private addresses (issue 29), on a scripted controller: a
/// bonded device's reports come under its identity with `resolvedFrom`, a stranger's as they
/// were, and `connect(to: identity)` sends LE Create Connection to the private address the
/// device was seen with.
@Suite(.timeLimit(.minutes(1)))
struct HostPrivateAddressTests {
    static let irk = SecurityKey(bytes: Hex.bytes("ec0234a357c8ad05341010a60a397d9b") ?? [])!
    static let identity = BLEAddress(string: "B0:B0:B0:00:00:2C")!
    static let name: [UInt8] = [0x04, 0x09, 0x52, 0x50, 0x41]

    @Test func aBondedDevicesPrivateAddressIsReportedAndConnectedUnderItsIdentity() async throws {
        let controller = ScriptedController()
        let host = HCIHost(stream: controller, clock: ManualClock())
        try await host.start()
        await host.useResolvingIdentities([ResolvingIdentity(irk: Self.irk, identity: Self.identity)])
        var random = SecurityRandom.seeded(29)
        let rpa = try ResolvablePrivateAddress.make(irk: Self.irk, random: &random)
        let stranger = try ResolvablePrivateAddress.make(irk: SecurityKey(number: 4), random: &random)

        let central = BLECentral(host: host, uri: .sim(options: [:]), events: nil)
        var devices = central.discover().makeAsyncIterator()
        await controller.waitForCommand(0x200C)
        controller.inject(ScriptedController.advertisingReport(stranger, data: Self.name))
        controller.inject(ScriptedController.advertisingReport(rpa, data: Self.name))
        let first = try #require(try await devices.next())
        #expect(first.address == stranger && first.resolvedFrom == nil)
        let second = try #require(try await devices.next())
        #expect(second.address == Self.identity, "\(second)")
        #expect(second.resolvedFrom == rpa && second.onAirAddress == rpa)
        #expect(second.name == "RPA")

        let attempt = Task { try await host.connect(to: Self.identity) }
        await controller.waitForCommand(0x200D)
        let create = try #require(controller.commands.last { $0.opcode == 0x200D })
        #expect(create.parameters[5] == 0x01, "LE Create Connection to a public address, not the private one")
        #expect(BLEAddress(littleEndian: create.parameters[6..<12], kind: .random) == rpa)
        controller.inject(ScriptedController.connectionComplete(handle: 0x0041, peer: rpa))
        let connection = try await attempt.value
        #expect(connection.peer == rpa)
        await host.close()
    }
}
