import BLEProtocol
import HAL
import HALFakes
import SerialTestSupport
import Testing
import Transports
import Peripherals
import VirtualController

/// A test playing the host by hand: raw H4 packets to the controller, and everything it has
/// queued back, parsed. The controller answers commands before `write` returns, so what a
/// command caused is there to read at once; what needs time needs the clock moved first.
final class RawHost {
    let controller: VirtualController
    private var iterator: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
    private var framer = H4Framer()

    init(_ controller: VirtualController) {
        self.controller = controller
        iterator = controller.incoming().makeAsyncIterator()
    }

    func write(_ bytes: [UInt8]) async throws {
        try await controller.write(bytes)
    }

    /// Every packet the controller has queued for the host.
    func drain() async throws -> [HCIPacket] {
        var packets: [HCIPacket] = []
        while controller.pendingBytes > 0, let chunk = try await iterator.next() {
            packets += try framer.feed(chunk)
        }
        return packets
    }

    func events() async throws -> [HCIEventPacket] {
        try await drain().compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// Sends a command and returns every event queued after it, the answer first.
    func send(_ command: HCICommand) async throws -> [HCIEvent] {
        try await write(HCIPacket.command(command).h4Bytes)
        return try await events().map { try HCIEvent(parsing: $0) }
    }

    /// The return parameters of the command's Command Complete.
    func complete(_ command: HCICommand) async throws -> [UInt8] {
        for event in try await send(command) {
            if case .commandComplete(_, let opcode, let rp) = event, opcode == command.opcode { return rp }
        }
        Issue.record("no Command Complete for \(command.name)")
        return []
    }

    /// The status of the command's Command Status.
    func status(_ command: HCICommand) async throws -> UInt8? {
        for event in try await send(command) {
            if case .commandStatus(let status, _, let opcode) = event, opcode == command.opcode { return status }
        }
        Issue.record("no Command Status for \(command.name)")
        return nil
    }

    /// What our host sends at start-up, so the controller reports LE events.
    func initialise() async throws {
        _ = try await complete(.reset)
        _ = try await complete(.setEventMask(0x3DBF_F807_FFFB_FFFF))
        _ = try await complete(.leSetEventMask(0x0000_0000_000F_FFFF))
    }
}

/// Commands our host stack does not send (yet), as the specification lays them out.
enum ExtendedCommands {
    /// LE Set Extended Scan Parameters on the 1M PHY (Vol 4 Part E §7.8.64).
    static func scanParameters(active: Bool, phys: UInt8 = 0x01) -> HCICommand {
        var p: [UInt8] = [0x00, 0x00, phys]
        for _ in 0..<phys.nonzeroBitCount { p += [active ? 1 : 0, 0x60, 0x00, 0x30, 0x00] }
        return HCICommand(opcode: 0x2041, parameters: p)
    }

    /// LE Set Extended Scan Enable (§7.8.65); duration in 10 ms units.
    static func scanEnable(_ enable: Bool, duplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) -> HCICommand {
        HCICommand(opcode: 0x2042, parameters: [enable ? 1 : 0, duplicates, UInt8(duration & 0xFF), UInt8(duration >> 8),
                                                UInt8(period & 0xFF), UInt8(period >> 8)])
    }

    /// LE Extended Create Connection on the 1M PHY (§7.8.66).
    static func createConnection(_ peer: BLEAddress) -> HCICommand {
        var p: [UInt8] = [0x00, 0x00, peer.kind == .random ? 1 : 0] + peer.littleEndianBytes + [0x01]
        for value: UInt16 in [0x0060, 0x0060, 0x0018, 0x0028, 0, 0x01F4, 0, 0] { p += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        return HCICommand(opcode: 0x2043, parameters: p)
    }
}

/// A peripheral for the link tests: a long readable value, a value that records writes, an
/// indicate characteristic, and a hook for doing things on the link by hand.
struct LabPeripheral: VirtualPeripheral {
    static let service = BluetoothUUID(string: "A5C30001-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let long = BluetoothUUID(string: "A5C30002-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let sink = BluetoothUUID(string: "A5C30003-6B1E-4F2A-9D3C-2B7E5F10C4A9")!
    static let longValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }

    let address: BLEAddress
    let advertising: VirtualAdvertising
    var connected = false
    var server: ATTServer
    var behaviour = Behaviour()
    /// Link changes the peripheral was told of, in order.
    var changes: [VirtualLinkChange] = []
    var downReasons: [UInt8] = []
    var signalingAnswers: [Bool] = []
    /// Frames to send when the link comes up (e.g. an L2CAP parameter request).
    var onLinkUp: [PeripheralAction] = []

    init(address: BLEAddress = BLEAddress(string: "C2:B0:B0:00:00:01/random")!, firstAdvertisement: Duration = .milliseconds(100),
         interval: Duration = .milliseconds(100), extended: Bool = false) {
        self.address = address
        let advertisement = Advertisement(flags: 0x06, localName: "Lab", serviceUUIDs: [Self.service])
        advertising = VirtualAdvertising(form: VirtualAdvertising.form(for: advertisement, extended: extended), interval: interval,
                                         firstEvent: firstAdvertisement, rssi: -40)
        var builder = AttributeDatabase.Builder()
        builder.standardServices(deviceName: "Lab", appearance: 0)
        builder.service(Self.service, [CharacteristicDefinition(Self.long, .read, value: Self.longValue),
                                       CharacteristicDefinition(Self.sink, [.write, .writeWithoutResponse])])
        server = ATTServer(database: builder.build(), preferredMTU: 247)
    }

    var isAdvertising: Bool { !connected }
    var nextDeadline: Duration? { nil }

    mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        server.reset()
        return onLinkUp
    }

    mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        downReasons.append(reason)
    }

    mutating func linkChanged(_ change: VirtualLinkChange, at now: Duration) -> [PeripheralAction] {
        changes.append(change)
        return []
    }

    mutating func advance(to now: Duration) -> [PeripheralAction] { [] }

    mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        if frame.channel == L2CAPFrame.leSignaling, case .connectionParameterUpdateResponse(_, let result)? = try? LESignalingPacket(parsing: frame.payload) {
            signalingAnswers.append(result == 0)
            return []
        }
        guard frame.channel == L2CAPFrame.att else { return [] }
        return server.receive(frame.payload, behaviour: &behaviour).map { .send(L2CAPFrame(channel: L2CAPFrame.att, payload: $0)) }
    }

    struct Behaviour: ATTServerBehaviour {
        var writes: [[UInt8]] = []
        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> { .failure(.readNotPermitted) }
        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            writes.append(value)
            return nil
        }
        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) {}
    }
}

/// Moves the manual clock to `offset`, deadline by deadline, letting the controller's timer run
/// at each (call inside `withSerialExecutor`).
func advance(_ clock: ManualClock, to offset: Duration) async {
    // First let every task that was just started reach its sleep, or its deadline is not seen.
    await settleSerialExecutor()
    while let next = clock.nextDeadline, next.offset <= offset {
        clock.advance(to: next)
        await settleSerialExecutor()
    }
    if clock.now.offset < offset { clock.advance(to: ManualClock.Instant(offset: offset)) }
    await settleSerialExecutor()
}
