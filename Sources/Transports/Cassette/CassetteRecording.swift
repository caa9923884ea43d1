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
        /// The Pairing Request of the pairing under way, until its response names the method.
        var pairingRequest: PairingFeatures?
        /// Where that pairing's record is, so the keys each side sends are added to it.
        var pairingRecord: Int?
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
            if let (handle, change) = SecurityHCI.event(from: event) {
                if case .encryptionChanged(status: 0, enabled: true) = change, let link = links[handle] {
                    append(BLECassette.SecurityRecord(at: now - link.started, event: .encrypted), to: link)
                }
                return
            }
            handle(event, at: now)
        case .acl(let acl):
            guard let link = links[acl.handle] else { return }
            let frame = sentByHost ? fromHost.add(acl) : fromController.add(acl)
            if let frame, frame.channel == L2CAPFrame.securityManager {
                security(frame.payload, fromHost: sentByHost, handle: acl.handle, at: now - link.started)
                return
            }
            guard let frame, frame.channel == L2CAPFrame.att, !frame.payload.isEmpty else { return }
            append(BLECassette.ATTRecord(at: now - link.started, direction: sentByHost ? .toPeripheral : .fromPeripheral,
                                         pdu: Array(frame.payload.prefix(BLECassette.Limits.attPDUBytes))), to: link)
        default:
            break
        }
    }

    /// Our host resolved `address` (a device already recorded from its advertising report) to
    /// `identity`: kept beside it, so a replay knows the device by its identity too. A device
    /// seen only under an address never resolved, or not resolvable, is left as it is.
    public mutating func resolved(_ address: BLEAddress, to identity: BLEAddress) {
        guard ResolvablePrivateAddress.isResolvable(address),
              let index = cassette.peripherals.firstIndex(where: { $0.address == address }) else { return }
        cassette.peripherals[index].identity = identity
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

    /// One SMP PDU (either way): the method once request and response are both seen, the kinds
    /// of keys sent, a Pairing Failed; never a value. What does not parse is not recorded.
    private mutating func security(_ payload: [UInt8], fromHost: Bool, handle: UInt16, at time: Duration) {
        guard var link = links[handle], let pdu = try? SMPPDU(parsing: payload) else { return }
        defer { links[handle] = link }
        switch pdu {
        case .pairingRequest(let features):
            link.pairingRequest = features
            link.pairingRecord = nil
            return
        case .pairingResponse(let response):
            guard let request = link.pairingRequest else { return }
            let secureConnections = request.authentication.contains(.secureConnections) && response.authentication.contains(.secureConnections)
            let method = AssociationModel.method(initiator: request, responder: response, secureConnections: secureConnections)
            link.pairingRecord = append(BLECassette.SecurityRecord(at: time, event: .pairing(method: method.description, secureConnections: secureConnections,
                                                                                            deviceKeys: [], hostKeys: [])), to: link)
            return
        case .pairingFailed(let reason):
            link.pairingRecord = nil
            append(BLECassette.SecurityRecord(at: time, event: .pairingFailed(reason: reason.rawValue)), to: link)
            return
        default: break
        }
        guard let key = pdu.keyKind, let index = link.pairingRecord else { return }
        let records = cassette.peripherals[link.peripheral].connections[link.connection].security
        guard index < records.count, case .pairing(let method, let sc, var deviceKeys, var hostKeys) = records[index].event else { return }
        if fromHost { hostKeys.append(key) } else { deviceKeys.append(key) }
        cassette.peripherals[link.peripheral].connections[link.connection].security[index].event =
            .pairing(method: method, secureConnections: sc, deviceKeys: deviceKeys, hostKeys: hostKeys)
    }

    /// Appends a security record; its index, or nil past the limit.
    @discardableResult
    private mutating func append(_ record: BLECassette.SecurityRecord, to link: Link) -> Int? {
        let count = cassette.peripherals[link.peripheral].connections[link.connection].security.count
        guard count < BLECassette.Limits.securityRecords else {
            dropped += 1
            return nil
        }
        cassette.peripherals[link.peripheral].connections[link.connection].security.append(record)
        return count
    }

    private mutating func append(_ record: BLECassette.ATTRecord, to link: Link) {
        guard cassette.peripherals[link.peripheral].connections[link.connection].att.count < BLECassette.Limits.attRecords else {
            dropped += 1
            return
        }
        cassette.peripherals[link.peripheral].connections[link.connection].att.append(record)
    }
}
