import BLEProtocol
import HAL

/// Builds a `BLECassette` from the HCI traffic between our host and its controller, fed one
/// whole packet at a time with the time it passed (sans-IO: `CassetteRecorder` feeds it from the
/// host's packet tap). It reads what the host stack reads — advertising reports, connection and
/// disconnection events, ACL data put back into L2CAP — so recording sits in one place and sees
/// every command the same way, without any command knowing.
///
/// Bounded like the host: at most `BLECassette.Limits` of everything; what goes past a limit is
/// counted in `dropped` and not kept.
public struct CassetteRecording: Sendable {
    /// What was recorded so far, within `BLECassette.Limits`.
    public private(set) var cassette = BLECassette()
    /// Records not kept because a limit was reached.
    public private(set) var dropped = 0

    private struct Link {
        var peripheral: Int
        var connection: Int
        var started: Duration
    }
    private var links: [UInt16: Link] = [:]
    /// Links our host asked to end (HCI Disconnect went out for them).
    private var closingLocally: Set<UInt16> = []
    private var fromController = ACLReassembler()
    private var fromHost = ACLReassembler()
    private var lastAdvertising: [Int: [BLECassette.AdvertisingKind: [UInt8]]] = [:]

    /// An empty recording; time zero is whatever `now` the caller counts from.
    public init() {}

    /// One packet, as it went between host and controller, at `now` from the recording's start.
    public mutating func record(_ packet: HCIPacket, sentByHost: Bool, at now: Duration) {
        let now = min(max(now, .zero), BLECassette.Limits.time - .microseconds(1))
        switch packet {
        case .command(let command) where sentByHost:
            // HCI Disconnect (0x0406): handle in the first two bytes.
            if command.opcode == 0x0406, command.parameters.count >= 2 {
                closingLocally.insert(UInt16(command.parameters[0]) | UInt16(command.parameters[1] & 0x0F) << 8)
            }
        case .event(let raw) where !sentByHost:
            guard let event = try? HCIEvent(parsing: raw) else { return }
            handle(event, at: now)
        case .acl(let acl):
            guard let link = links[acl.handle] else { return }
            let frame = sentByHost ? fromHost.add(acl) : fromController.add(acl)
            guard let frame, frame.channel == L2CAPFrame.att, !frame.payload.isEmpty else { return }
            append(BLECassette.ATTRecord(at: now - link.started, direction: sentByHost ? .toPeripheral : .fromPeripheral,
                                         pdu: Array(frame.payload.prefix(BLECassette.Limits.attPDUBytes))), to: link)
        default:
            break
        }
    }

    private mutating func handle(_ event: HCIEvent, at now: Duration) {
        switch event {
        case .leAdvertisingReports(let reports):
            for report in reports { advertised(report, at: now) }
        case .leConnectionComplete(let complete) where complete.status == 0:
            guard let index = peripheralIndex(complete.peer),
                  cassette.peripherals[index].connections.count < BLECassette.Limits.connections else {
                dropped += 1
                return
            }
            cassette.peripherals[index].connections.append(BLECassette.Connection(at: now))
            links[complete.handle] = Link(peripheral: index, connection: cassette.peripherals[index].connections.count - 1, started: now)
        case .disconnectionComplete(let status, let handle, let reason) where status == 0:
            fromHost.forget(handle: handle)
            fromController.forget(handle: handle)
            let byHost = closingLocally.remove(handle) != nil
            guard let link = links.removeValue(forKey: handle) else { return }
            cassette.peripherals[link.peripheral].connections[link.connection].end =
                BLECassette.Disconnection(at: now - link.started, byHost: byHost, reason: reason)
        default:
            break
        }
    }

    private mutating func advertised(_ report: LEAdvertisingReport, at now: Duration) {
        let kind = BLECassette.AdvertisingKind(report)
        guard report.data.count <= kind.maximumData, let index = peripheralIndex(report.address) else {
            dropped += 1
            return
        }
        // Only a change is kept: a peripheral repeats itself ten times a second.
        guard lastAdvertising[index]?[kind] != report.data else { return }
        guard cassette.peripherals[index].advertising.count < BLECassette.Limits.advertisingRecords else {
            dropped += 1
            return
        }
        lastAdvertising[index, default: [:]][kind] = report.data
        cassette.peripherals[index].advertising.append(BLECassette.AdvertisingRecord(at: now, kind: kind, rssi: report.rssi, data: report.data))
    }

    private mutating func peripheralIndex(_ address: BLEAddress) -> Int? {
        if let index = cassette.peripherals.firstIndex(where: { $0.address == address }) { return index }
        guard cassette.peripherals.count < BLECassette.Limits.peripherals else { return nil }
        cassette.peripherals.append(BLECassette.Peripheral(address: address))
        return cassette.peripherals.count - 1
    }

    private mutating func append(_ record: BLECassette.ATTRecord, to link: Link) {
        guard cassette.peripherals[link.peripheral].connections[link.connection].att.count < BLECassette.Limits.attRecords else {
            dropped += 1
            return
        }
        cassette.peripherals[link.peripheral].connections[link.connection].att.append(record)
    }
}
