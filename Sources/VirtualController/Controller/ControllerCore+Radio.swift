import BLEProtocol
import HAL
import Peripherals
import Transports

/// The air side: advertising events, connections, ACL both ways with the LE buffers' credits.
extension ControllerCore {
    // MARK: advertising and scanning

    var isListening: Bool { scanner != nil || initiator != nil }

    /// Scanning or initiating started or stopped: advertising events matter only while someone
    /// listens, so only then do they wake the controller.
    mutating func listeningChanged(at now: Duration) {
        for index in slots.indices {
            if isListening {
                if slots[index].nextAdvertisingEvent == nil { slots[index].nextAdvertisingEvent = nextEvent(index, atOrAfter: now) }
            } else {
                slots[index].nextAdvertisingEvent = nil
            }
        }
    }

    /// The slot's next advertising event at or after `time`, never one that already happened.
    func nextEvent(_ index: Int, atOrAfter time: Duration) -> Duration {
        let advertising = slots[index].peripheral.advertising
        var event = Self.occurrence(of: advertising, atOrAfter: time)
        if let last = slots[index].lastAdvertisingEvent, event <= last {
            event = Self.occurrence(of: advertising, atOrAfter: last + .nanoseconds(1))
        }
        return event
    }

    /// The first advertising event at or after `time`: events fall at `firstEvent + k × interval`.
    static func occurrence(of advertising: VirtualAdvertising, atOrAfter time: Duration) -> Duration {
        guard time > advertising.firstEvent else { return advertising.firstEvent }
        let elapsed = time - advertising.firstEvent
        var count = Int64((elapsed / advertising.interval).rounded(.up))
        var event = advertising.firstEvent + advertising.interval * count
        while event < time {
            count += 1
            event = advertising.firstEvent + advertising.interval * count
        }
        return event
    }

    mutating func advertisingEvent(_ index: Int, at now: Duration) {
        let advertising = slots[index].peripheral.advertising
        slots[index].lastAdvertisingEvent = now
        slots[index].nextAdvertisingEvent = isListening ? nextEvent(index, atOrAfter: now) : nil
        guard slots[index].handle == nil || slots[index].peripheral.advertisesWhileConnected, slots[index].peripheral.isAdvertising else { return }
        let address = slots[index].peripheral.address
        // An initiator connects on the advertisement itself (CONNECT_IND answers it), Vol 6 Part B §4.5.
        if slots[index].handle == nil, let initiator, advertising.connectable, accepts(initiator, address: address, form: advertising.form) {
            establish(index, initiator, at: now)
            return
        }
        if let scanner { report(index, advertising, scanner) }
    }

    private func accepts(_ initiator: Initiator, address: BLEAddress, form: VirtualAdvertising.Form) -> Bool {
        if case .extended = form, !initiator.extended, !configuration.legacyCommandsSeeExtendedAdvertising { return false }
        if initiator.filterPolicy == 0 { return initiator.peer == address }
        return acceptList.contains(address)
    }

    private mutating func report(_ index: Int, _ advertising: VirtualAdvertising, _ scanner: Scanner) {
        let address = slots[index].peripheral.address
        if scanner.filterPolicy & 0x01 != 0, !acceptList.contains(address) { return }
        let addressType: UInt8 = address.kind == .random ? 0x01 : 0x00
        switch advertising.form {
        case .legacy(let data, let scanResponse):
            // ADV_IND, or for a broadcaster ADV_SCAN_IND (with a scan response) or ADV_NONCONN_IND
            // (Vol 4 Part E §7.7.65.2 and §7.7.65.13 event types).
            let scannable = advertising.connectable || !scanResponse.isEmpty
            let (legacyType, extendedType): (UInt8, UInt16) = advertising.connectable ? (0x00, 0x0013) : scannable ? (0x02, 0x0012) : (0x03, 0x0010)
            if firstSighting(address, scanResponse: false) {
                if scanner.extended {
                    emitExtendedReport(eventType: extendedType, addressType, address, advertising, data: Array(data.prefix(31)), legacy: true)
                } else {
                    emitLE(0x02, [1, legacyType, addressType] + address.littleEndianBytes + [UInt8(min(data.count, 31))] + data.prefix(31)
                           + [UInt8(bitPattern: advertising.rssi)], droppable: true)
                }
            }
            // Active scanning: a scannable advertisement's scan request is answered with SCAN_RSP.
            guard scannable, scanner.active, firstSighting(address, scanResponse: true) else { return }
            if scanner.extended {
                emitExtendedReport(eventType: advertising.connectable ? 0x001B : 0x001A, addressType, address, advertising,
                                   data: Array(scanResponse.prefix(31)), legacy: true)
            } else {
                emitLE(0x02, [1, 0x04, addressType] + address.littleEndianBytes + [UInt8(min(scanResponse.count, 31))]
                       + scanResponse.prefix(31) + [UInt8(bitPattern: advertising.rssi)], droppable: true)
            }
        case .extended(let data):
            // A legacy scanner does not hear extended advertising at all.
            guard scanner.extended || configuration.legacyCommandsSeeExtendedAdvertising,
                  firstSighting(address, scanResponse: false) else { return }
            emitExtendedReport(eventType: advertising.connectable ? 0x0001 : 0x0000, addressType, address, advertising, data: data, legacy: false)
        }
    }

    /// With duplicate filtering on, each advertiser (and its scan response) is reported once
    /// per scan; the cache is bounded and forgets when full, as controllers' caches do.
    private mutating func firstSighting(_ address: BLEAddress, scanResponse: Bool) -> Bool {
        guard var scanner, scanner.filterDuplicates else { return true }
        if scanner.reported.count >= 256 { scanner.reported.removeAll() }
        let inserted = scanner.reported.insert(address.bytes + [address.kind == .random ? 1 : 0, scanResponse ? 1 : 0]).inserted
        self.scanner = scanner
        return inserted
    }

    /// LE Extended Advertising Report (§7.7.65.13): data beyond 229 bytes goes in several reports,
    /// all but the last marked "incomplete, more data to come".
    private mutating func emitExtendedReport(eventType: UInt16, _ addressType: UInt8, _ address: BLEAddress,
                                             _ advertising: VirtualAdvertising, data: [UInt8], legacy: Bool) {
        let limit = 229
        var offset = 0
        repeat {
            let end = min(offset + limit, data.count)
            let more = end < data.count
            let type = eventType | (more ? 0x0020 : 0x0000)
            var report = LittleEndian.u16(type) + [addressType] + address.littleEndianBytes
            report += [0x01, legacy ? 0x00 : 0x01, legacy ? 0xFF : 0x00, legacy ? 0x7F : UInt8(bitPattern: advertising.txPower)]
            report += [UInt8(bitPattern: advertising.rssi)] + LittleEndian.u16(0) + [0x00] + [UInt8](repeating: 0, count: 6)
            report += [UInt8(end - offset)] + data[offset..<end]
            emitLE(0x0D, [1] + report, droppable: true)
            offset = end
        } while offset < data.count
    }

    // MARK: connections

    func freeHandle() -> UInt16? {
        guard links.count < configuration.maximumConnections else { return nil }
        var handle = configuration.firstConnectionHandle
        while links[handle] != nil { handle += 1 }
        return handle <= 0x0EFF ? handle : nil
    }

    /// The central's own address for a link: its random one when the host asked for it.
    func ownAddress(_ type: UInt8) -> BLEAddress {
        type & 0x01 != 0 ? randomAddress ?? configuration.address : configuration.address
    }

    private mutating func establish(_ index: Int, _ initiator: Initiator, at now: Duration) {
        guard let handle = freeHandle() else { return }
        let peer = slots[index].peripheral.address
        let link = Link(handle: handle, slot: index, serial: nextSerial, peer: peer, interval: initiator.minInterval,
                        latency: initiator.latency, timeout: initiator.timeout)
        nextSerial += 1
        links[handle] = link
        slots[index].handle = handle
        self.initiator = nil
        listeningChanged(at: now)
        connectionComplete(status: 0, handle: handle, peer: peer, interval: link.interval, latency: link.latency, timeout: link.timeout)
        let parameters = VirtualLinkParameters(central: ownAddress(initiator.ownAddressType), interval: link.interval,
                                               latency: link.latency, supervisionTimeout: link.timeout)
        // Nothing can go over the new link before its first connection event, a transmit window
        // after CONNECT_IND (Vol 6 Part B §4.5.3); what the peripheral has to say waits for it.
        let actions = slots[index].peripheral.linkUp(parameters, at: now)
        if !actions.isEmpty {
            links[handle]?.firstEvent = actions
            timers.add(.firstConnectionEvent(handle: handle, serial: link.serial), at: now + .microseconds(1250 * Int64(link.interval)))
        }
    }

    /// LE Enhanced Connection Complete when the host unmasked it (it then replaces the legacy
    /// event, §7.7.65.10), else LE Connection Complete.
    mutating func connectionComplete(status: UInt8, handle: UInt16, peer: BLEAddress?, interval: UInt16, latency: UInt16, timeout: UInt16) {
        let peerType: UInt8 = peer?.kind == .random ? 0x01 : 0x00
        let peerBytes = peer?.littleEndianBytes ?? [UInt8](repeating: 0, count: 6)
        var body = [status] + LittleEndian.u16(handle) + [0x00, peerType] + peerBytes
        let tail = LittleEndian.u16(interval) + LittleEndian.u16(latency) + LittleEndian.u16(timeout) + [0x00]
        if isUnmaskedLE(0x0A) {
            body += [UInt8](repeating: 0, count: 12) + tail
            emitLE(0x0A, body)
        } else {
            emitLE(0x01, body + tail)
        }
    }

    /// Ends a link: the peripheral hears `peripheralReason`, the host gets Disconnection Complete
    /// with `hostReason`. The handle is free again at once, for the next link to reuse.
    mutating func endLink(_ handle: UInt16, hostReason: UInt8, peripheralReason: UInt8, at now: Duration) {
        guard let link = links.removeValue(forKey: handle) else { return }
        // Packets still waiting for the air are flushed with the link; their buffers are free.
        buffersInUse = max(0, buffersInUse - link.waiting.count)
        flushCompleted()
        completed.removeAll { $0.handle == handle }
        slots[link.slot].handle = nil
        slots[link.slot].peripheral.linkDown(reason: peripheralReason, at: now)
        emit(0x05, [0x00] + LittleEndian.u16(handle) + [hostReason])
        if isListening { slots[link.slot].nextAdvertisingEvent = nextEvent(link.slot, atOrAfter: now) }
    }

    /// What a peripheral asked for. After it ends its link, whatever else it asked is void.
    mutating func perform(_ actions: [PeripheralAction], slot: Int, at now: Duration, depth: Int = 0) {
        for action in actions {
            guard let handle = slots[slot].handle, let link = links[handle], !link.lost else { return }
            switch action {
            case .send(let frame):
                deliver(frame, on: handle)
            case .disconnect(let reason):
                endLink(handle, hostReason: reason, peripheralReason: 0x16, at: now)
            case .vanish:
                links[handle]?.lost = true
                timers.add(.supervision(handle: handle, serial: link.serial), at: now + .milliseconds(10 * Int64(link.timeout)))
            case .requestParameters(let minimum, let maximum, let latency, let timeout):
                // The host answers with a Reply or a Negative Reply (§7.7.65.6); a host that
                // masked the event cannot, so the controller refuses for it (0x1A, §7.8.31).
                if isUnmaskedLE(0x06), !link.parameterRequest {
                    links[handle]?.parameterRequest = true
                    emitLE(0x06, LittleEndian.u16(handle) + LittleEndian.u16(minimum) + LittleEndian.u16(maximum) + LittleEndian.u16(latency) + LittleEndian.u16(timeout))
                } else if depth < 4 {
                    let more = slots[slot].peripheral.linkChanged(.parameterRequestRefused(reason: 0x1A), at: now)
                    perform(more, slot: slot, at: now, depth: depth + 1)
                }
            }
        }
    }

    // MARK: ACL

    /// A packet from the host. It takes one of the LE buffers until it has gone over the air.
    mutating func hostACL(_ packet: ACLPacket, at now: Duration) {
        counters.aclFromHost += 1
        guard let link = links[packet.handle], packet.data.count <= Int(configuration.leBufferLength) else {
            counters.droppedHostPackets += 1
            return
        }
        // A host that sends without a credit overflows the buffers (Data Buffer Overflow, §7.7.26).
        guard buffersInUse < Int(configuration.leBufferCount) else {
            counters.bufferOverflows += 1
            counters.droppedHostPackets += 1
            emit(0x1A, [0x01])
            return
        }
        buffersInUse += 1
        counters.mostBuffersInUse = max(counters.mostBuffersInUse, buffersInUse)
        if configuration.airDelay == .zero {
            transmit(packet, at: now)
        } else {
            links[packet.handle]?.waiting.append((packet, now + configuration.airDelay))
            timers.add(.air(handle: packet.handle, serial: link.serial), at: now + configuration.airDelay)
        }
    }

    /// The packet went over the air: its buffer is free (Number Of Completed Packets follows),
    /// and the peripheral gets the L2CAP frame once its last fragment is in.
    mutating func transmit(_ packet: ACLPacket, at now: Duration) {
        buffersInUse = max(0, buffersInUse - 1)
        if let index = completed.firstIndex(where: { $0.handle == packet.handle }) {
            completed[index].count += 1
        } else {
            completed.append((packet.handle, 1))
        }
        guard var link = links[packet.handle], !link.lost else { return }
        let frame = link.reassembler.add(packet)
        links[packet.handle] = link
        guard let frame else { return }
        let slot = link.slot
        let actions = slots[slot].peripheral.received(frame, at: now)
        perform(actions, slot: slot, at: now)
    }

    /// A frame from a peripheral to the host: in link-layer-sized fragments, behind anything the
    /// link already holds back.
    mutating func deliver(_ frame: L2CAPFrame, on handle: UInt16) {
        guard var link = links[handle] else { return }
        if link.backlogCount > 0 || out.bytes >= configuration.hostQueueSoftLimit {
            guard link.backlogCount < configuration.linkBacklogLimit else {
                counters.droppedFrames += 1
                return
            }
            link.backlog.append(frame)
            links[handle] = link
            return
        }
        sendFragments(frame, on: handle)
    }

    private mutating func sendFragments(_ frame: L2CAPFrame, on handle: UInt16) {
        // Completed packets are reported before the data that may answer them.
        flushCompleted()
        let pdu = frame.encoded
        let size = max(1, configuration.airPayloadLength)
        var offset = 0
        while offset < pdu.count {
            let end = min(offset + size, pdu.count)
            // From the controller a first fragment is "first, automatically flushable" (0b10).
            let packet = ACLPacket(handle: handle, boundary: offset == 0 ? .firstFlushable : .continuing, data: Array(pdu[offset..<end]))
            counters.aclToHost += 1
            sendToHost(HCIPacket.acl(packet).h4Bytes, droppable: false)
            offset = end
        }
    }

    /// Moves held-back frames to the host while there is room, then lets streaming peripherals
    /// fill what is left.
    mutating func refill(at now: Duration) {
        for handle in links.keys.sorted() {
            while out.bytes < configuration.hostQueueSoftLimit, var link = links[handle], link.backlogCount > 0 {
                let frame = link.backlog[link.backlogHead]
                link.backlogHead += 1
                if link.backlogHead == link.backlog.count {
                    link.backlog = []
                    link.backlogHead = 0
                }
                links[handle] = link
                sendFragments(frame, on: handle)
            }
        }
        for index in slots.indices {
            guard let handle = slots[index].handle else { continue }
            while out.bytes < configuration.hostQueueSoftLimit, let link = links[handle], !link.lost, link.backlogCount == 0 {
                let frames = slots[index].peripheral.framesToSend(room: configuration.linkBacklogLimit, at: now)
                if frames.isEmpty { break }
                for frame in frames { deliver(frame, on: handle) }
            }
        }
    }
}
