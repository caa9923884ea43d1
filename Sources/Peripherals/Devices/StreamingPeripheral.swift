import BLEProtocol
import HAL
import Transports

/// A peripheral that notifies as fast as the link takes it: `count` values of `size` bytes, each
/// starting with its sequence number (u32), once notifications are enabled. For measuring the
/// host's receive path on the virtual controller, where no peer is the bottleneck, and for
/// checking that a fast peripheral is held back by a slow host instead of filling memory.
package struct StreamingPeripheral: VirtualPeripheral {
    /// `5EED0001-6B1E-4F2A-9D3C-2B7E5F10C4A9` and `5EED0002-…`: made up for the benchmark and tests.
    package static let service = BluetoothUUID(high: 0x5EED_0001_6B1E_4F2A, low: 0x9D3C_2B7E_5F10_C4A9)
    package static let stream = BluetoothUUID(high: 0x5EED_0002_6B1E_4F2A, low: 0x9D3C_2B7E_5F10_C4A9)

    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    package let count: Int
    package let size: Int
    package let valueHandle: UInt16
    package private(set) var sent = 0
    package private(set) var connected = false

    private var server: ATTServer
    private var behaviour = Behaviour()

    package init(address: BLEAddress, count: Int, size: Int = 20, interval: Duration = .milliseconds(50)) {
        self.address = address
        self.count = max(0, count)
        self.size = min(max(4, size), 244)
        let advertisement = Advertisement(flags: 0x06, localName: "Stream", serviceUUIDs: [Self.service])
        advertising = VirtualAdvertising(form: VirtualAdvertising.form(for: advertisement, extended: false), interval: interval)
        var builder = AttributeDatabase.Builder()
        builder.standardServices(deviceName: "Stream", appearance: 0)
        builder.service(Self.service, [CharacteristicDefinition(Self.stream, .notify)])
        let database = builder.build()
        valueHandle = database.valueHandle(of: Self.stream) ?? 0
        server = ATTServer(database: database, preferredMTU: ATTMTU.preferred)
    }

    package var isAdvertising: Bool { !connected }
    package var nextDeadline: Duration? { nil }

    package mutating func advance(to now: Duration) -> [PeripheralAction] { [] }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        sent = 0
        server.reset()
        behaviour = Behaviour()
        return []
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        server.reset()
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu): return server.receive(pdu, behaviour: &behaviour, at: now).map(PeripheralChannels.att)
        case .reply(let frame): return [.send(frame)]
        case .parameterUpdateAnswered, .nothing: return []
        }
    }

    package mutating func framesToSend(room: Int, at now: Duration) -> [L2CAPFrame] {
        guard connected, behaviour.notifying else { return [] }
        var frames: [L2CAPFrame] = []
        while sent < count, frames.count < room {
            var value = LittleEndian.u32(UInt32(truncatingIfNeeded: sent))
            value += [UInt8](repeating: UInt8(truncatingIfNeeded: sent), count: size - 4)
            guard let pdu = server.notification(valueHandle: valueHandle, value: value) else { break }
            frames.append(L2CAPFrame(channel: L2CAPFrame.att, payload: pdu))
            sent += 1
        }
        return frames
    }

    struct Behaviour: ATTServerBehaviour {
        var notifying = false
        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> { .failure(.readNotPermitted) }
        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            ATTRefusal(ATTErrorCode.writeNotPermitted)
        }
        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) { notifying = value & 0x0001 != 0 }
    }
}
