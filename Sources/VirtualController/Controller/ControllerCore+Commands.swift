@_spi(Fuzzing) import BLEProtocol
import HAL
import Peripherals
import Transports

/// HCI commands (Vol 4 Part E §7): each gets the Command Complete or Command Status a controller
/// gives it. A command with the wrong parameter length or out-of-range values gets Invalid HCI
/// Command Parameters (0x12); one this controller does not implement gets Unknown HCI Command (0x01).
extension ControllerCore {
    /// Commands answered with Command Status (and, later, an event of their own).
    static let statusCommands: Set<UInt16> = [0x0406, 0x041D, 0x200D, 0x2013, 0x2016, 0x2019, 0x2043]

    mutating func command(_ command: HCICommand, at now: Duration) {
        counters.commands += 1
        // A host that writes commands and never reads would fill memory; a controller's command
        // buffer is full and it drops them.
        guard out.bytes < configuration.hostQueueHardLimit else {
            counters.droppedEvents += 1
            return
        }
        let opcode = command.opcode
        if SupportedCommands.extendedOnly.contains(opcode), !configuration.supportsExtendedAdvertising {
            return unknown(opcode)
        }
        do {
            try dispatch(command, at: now)
        } catch {
            counters.invalidCommands += 1
            refuse(opcode, 0x12)
        }
    }

    private mutating func unknown(_ opcode: UInt16) {
        counters.unknownCommands += 1
        complete(opcode, [0x01])
    }

    /// Answers `opcode` with a failure status in whichever event it is answered with.
    mutating func refuse(_ opcode: UInt16, _ code: UInt8) {
        if Self.statusCommands.contains(opcode) { status(opcode, code) } else { complete(opcode, [code]) }
    }

    private mutating func dispatch(_ command: HCICommand, at now: Duration) throws(ParameterReader.Short) {
        var r = ParameterReader(command.parameters)
        let opcode = command.opcode
        /// Fixed-length commands must be exactly their length.
        func expect(_ length: Int) throws(ParameterReader.Short) {
            guard command.parameters.count == length else { throw ParameterReader.Short() }
        }
        /// The handle and the asked-for interval range, latency and supervision timeout that LE
        /// Connection Update and the Connection Parameter Request Reply both carry (14 bytes; the
        /// two connection-event lengths after them are not used here).
        func connectionRequest() throws(ParameterReader.Short) -> (UInt16, UInt16, UInt16, UInt16, UInt16) {
            try expect(14)
            let handle = try r.u16() & 0x0FFF
            return (handle, try r.u16(), try r.u16(), try r.u16(), try r.u16())
        }
        /// The length checked, then whether the command's family (legacy or extended) is the one
        /// the host chose; mixing them is Command Disallowed, which the caller answers.
        func admit(_ length: Int, _ family: CommandFamily) throws(ParameterReader.Short) -> Bool {
            try expect(length)
            return decide(family)
        }
        switch opcode {
        // MARK: link control
        case 0x0406: // Disconnect
            try expect(3)
            let handle = try r.u16() & 0x0FFF
            let reason = try r.u8()
            guard let link = links[handle] else { return status(opcode, 0x02) }
            // The reasons a host may give (§7.1.6).
            guard [0x05, 0x13, 0x14, 0x15, 0x1A, 0x29, 0x3B].contains(reason) else { throw ParameterReader.Short() }
            guard !link.terminating else { return status(opcode, 0x0C) }
            status(opcode, 0x00)
            // LL_TERMINATE_IND goes at the next connection event and is acknowledged at the one
            // after (Vol 6 Part B §5.1.3): Disconnection Complete follows then, with "terminated by
            // local host" on our side; the peripheral hears the host's reason.
            links[handle]?.terminating = true
            links[handle]?.lost = true
            timers.add(.terminated(handle: handle, serial: link.serial, reason: reason),
                       at: now + .microseconds(1250 * Int64(link.interval)))
        case 0x041D: // Read Remote Version Information
            try expect(2)
            let handle = try r.u16() & 0x0FFF
            guard links[handle] != nil else { return status(opcode, 0x02) }
            status(opcode, 0x00)
            emit(0x0C, [0x00] + LittleEndian.u16(handle) + [configuration.lmpVersion] + LittleEndian.u16(0xFFFF) + LittleEndian.u16(0x0001))

        // MARK: controller and baseband
        case 0x0C01: // Set Event Mask
            try expect(8)
            eventMask = try r.u64()
            complete(opcode, [0x00])
        case 0x0C03: // Reset
            try expect(0)
            reset(at: now)
            complete(opcode, [0x00])
        case 0x0C63: // Set Event Mask Page 2
            try expect(8)
            complete(opcode, [0x00])
        case 0x0C6C: // Read LE Host Support
            try expect(0)
            complete(opcode, [0x00, leHostSupported ? 1 : 0, 0x00])
        case 0x0C6D: // Write LE Host Support
            try expect(2)
            let le = try r.u8()
            guard le <= 1 else { throw ParameterReader.Short() }
            leHostSupported = le == 1
            complete(opcode, [0x00])

        // MARK: informational
        case 0x1001: // Read Local Version Information
            try expect(0)
            complete(opcode, [0x00, configuration.hciVersion] + LittleEndian.u16(configuration.hciRevision) + [configuration.lmpVersion]
                     + LittleEndian.u16(configuration.manufacturer) + LittleEndian.u16(configuration.lmpSubversion))
        case 0x1002: // Read Local Supported Commands
            try expect(0)
            complete(opcode, [0x00] + SupportedCommands.bitmap(extended: configuration.supportsExtendedAdvertising))
        case 0x1003: // Read Local Supported Features
            try expect(0)
            complete(opcode, [0x00] + configuration.lmpFeatures)
        case 0x1005: // Read Buffer Size: an LE-only controller has only its LE buffers to tell of.
            try expect(0)
            complete(opcode, [0x00] + LittleEndian.u16(configuration.leBufferLength) + [0x00] + LittleEndian.u16(UInt16(configuration.leBufferCount)) + LittleEndian.u16(0))
        case 0x1009: // Read BD_ADDR
            try expect(0)
            complete(opcode, [0x00] + configuration.address.littleEndianBytes)

        // MARK: status parameters
        case 0x1405: // Read RSSI
            try expect(2)
            let handle = try r.u16() & 0x0FFF
            guard let link = links[handle] else { return complete(opcode, [0x02] + LittleEndian.u16(handle) + [0x00]) }
            complete(opcode, [0x00] + LittleEndian.u16(handle) + [UInt8(bitPattern: slots[link.slot].peripheral.advertising.rssi)])

        // MARK: LE
        case 0x2001: // LE Set Event Mask
            try expect(8)
            leEventMask = try r.u64()
            complete(opcode, [0x00])
        case 0x2002: // LE Read Buffer Size
            try expect(0)
            complete(opcode, [0x00] + LittleEndian.u16(configuration.leBufferLength) + [configuration.leBufferCount])
        case 0x2003: // LE Read Local Supported Features
            try expect(0)
            complete(opcode, [0x00] + LittleEndian.u64(configuration.leFeatures))
        case 0x2005: // LE Set Random Address
            try expect(6)
            let raw = try r.bytes(6)
            // Not while scanning or initiating with it (§7.8.4).
            if (scanner != nil && scanParameters.ownAddressType & 0x01 != 0) || (initiator.map { $0.ownAddressType & 0x01 != 0 } ?? false) {
                return complete(opcode, [0x0C])
            }
            randomAddress = BLEAddress(littleEndian: raw, kind: .random)
            complete(opcode, [0x00])
        case 0x200B: // LE Set Scan Parameters
            guard try admit(7, .legacy) else { return complete(opcode, [0x0C]) }
            let type = try r.u8()
            let interval = try r.u16()
            let window = try r.u16()
            let own = try r.u8()
            let policy = try r.u8()
            guard type <= 1, (0x0004...0x4000).contains(interval), (0x0004...interval).contains(window), own <= 3, policy <= 3 else {
                throw ParameterReader.Short()
            }
            guard scanner == nil else { return complete(opcode, [0x0C]) }
            scanParameters = ScanParameters(active: type == 1, ownAddressType: own, filterPolicy: policy)
            complete(opcode, [0x00])
        case 0x200C: // LE Set Scan Enable
            guard try admit(2, .legacy) else { return complete(opcode, [0x0C]) }
            let enable = try r.u8()
            let duplicates = try r.u8()
            guard enable <= 1, duplicates <= 1 else { throw ParameterReader.Short() }
            if enable == 1 {
                guard scanParameters.ownAddressType & 0x01 == 0 || randomAddress != nil else { throw ParameterReader.Short() }
                startScanning(active: scanParameters.active, filterPolicy: scanParameters.filterPolicy, duplicates: duplicates != 0,
                              extended: false, duration: nil, at: now)
            } else {
                scanner = nil
                listeningChanged(at: now)
            }
            complete(opcode, [0x00])
        case 0x200D: // LE Create Connection
            guard try admit(25, .legacy) else { return status(opcode, 0x0C) }
            let scanInterval = try r.u16()
            let scanWindow = try r.u16()
            let policy = try r.u8()
            let (peerType, peer) = try r.address()
            let own = try r.u8()
            let minimum = try r.u16()
            let maximum = try r.u16()
            let latency = try r.u16()
            let timeout = try r.u16()
            guard (0x0004...0x4000).contains(scanInterval), (0x0004...scanInterval).contains(scanWindow), policy <= 1, peerType <= 3,
                  own <= 3, Self.validConnection(minimum, maximum, latency, timeout) else { throw ParameterReader.Short() }
            try initiate(Initiator(filterPolicy: policy, peer: peer, ownAddressType: own, minInterval: minimum, maxInterval: maximum,
                                   latency: latency, timeout: timeout, extended: false), opcode: opcode, at: now)
        case 0x200E: // LE Create Connection Cancel
            try expect(0)
            guard let pending = initiator else { return complete(opcode, [0x0C]) }
            initiator = nil
            listeningChanged(at: now)
            complete(opcode, [0x00])
            // The attempt ends with a Connection Complete of status Unknown Connection Identifier (§7.8.13).
            connectionComplete(status: 0x02, handle: 0, peer: pending.peer, interval: 0, latency: 0, timeout: 0)
        case 0x200F: // LE Read Filter Accept List Size
            try expect(0)
            complete(opcode, [0x00, configuration.acceptListSize])
        case 0x2010: // LE Clear Filter Accept List
            try expect(0)
            guard !acceptListInUse else { return complete(opcode, [0x0C]) }
            acceptList = []
            complete(opcode, [0x00])
        case 0x2011, 0x2012: // LE Add Device To / Remove Device From Filter Accept List
            try expect(7)
            let (type, address) = try r.address()
            guard type <= 1 else { throw ParameterReader.Short() }
            guard !acceptListInUse else { return complete(opcode, [0x0C]) }
            if opcode == 0x2011 {
                if !acceptList.contains(address) {
                    guard acceptList.count < Int(configuration.acceptListSize) else { return complete(opcode, [0x07]) }
                    acceptList.append(address)
                }
            } else {
                acceptList.removeAll { $0 == address }
            }
            complete(opcode, [0x00])
        case 0x2013: // LE Connection Update
            let (handle, minimum, maximum, latency, timeout) = try connectionRequest()
            guard let link = links[handle] else { return status(opcode, 0x02) }
            guard Self.validConnection(minimum, maximum, latency, timeout) else { throw ParameterReader.Short() }
            guard !link.updatePending else { return status(opcode, 0x0C) }
            status(opcode, 0x00)
            scheduleUpdate(handle, interval: minimum, latency: latency, timeout: timeout, at: now)
        case 0x2016: // LE Read Remote Features
            try expect(2)
            let handle = try r.u16() & 0x0FFF
            guard links[handle] != nil else { return status(opcode, 0x02) }
            status(opcode, 0x00)
            emitLE(0x04, [0x00] + LittleEndian.u16(handle) + LittleEndian.u64(1 << 1))
        case 0x2018: // LE Rand
            try expect(0)
            let value = random64()
            complete(opcode, [0x00] + LittleEndian.u64(value))
        case 0x2019: // LE Enable Encryption
            try expect(28)
            let handle = try r.u16() & 0x0FFF
            let rand = try r.u64()
            let ediv = try r.u16()
            guard let ltk = SecurityKey(littleEndian: try r.bytes(16)) else { throw ParameterReader.Short() }
            guard links[handle] != nil else { return status(opcode, 0x02) }
            status(opcode, 0x00)
            startEncryption(handle, key: EncryptionKey(ltk: ltk, ediv: ediv, rand: rand), at: now)
        case 0x2020: // LE Remote Connection Parameter Request Reply
            let (handle, minimum, maximum, latency, timeout) = try connectionRequest()
            guard let link = links[handle] else { return complete(opcode, [0x02] + LittleEndian.u16(handle)) }
            guard Self.validConnection(minimum, maximum, latency, timeout) else { throw ParameterReader.Short() }
            guard link.parameterRequest else { return complete(opcode, [0x0C] + LittleEndian.u16(handle)) }
            links[handle]?.parameterRequest = false
            complete(opcode, [0x00] + LittleEndian.u16(handle))
            scheduleUpdate(handle, interval: minimum, latency: latency, timeout: timeout, at: now)
        case 0x2021: // LE Remote Connection Parameter Request Negative Reply
            try expect(3)
            let handle = try r.u16() & 0x0FFF
            let reason = try r.u8()
            guard let link = links[handle] else { return complete(opcode, [0x02] + LittleEndian.u16(handle)) }
            guard link.parameterRequest else { return complete(opcode, [0x0C] + LittleEndian.u16(handle)) }
            links[handle]?.parameterRequest = false
            complete(opcode, [0x00] + LittleEndian.u16(handle))
            let actions = slots[link.slot].peripheral.linkChanged(.parameterRequestRefused(reason: reason), at: now)
            perform(actions, slot: link.slot, at: now)
        case 0x2041: // LE Set Extended Scan Parameters
            guard decide(.extended) else { return complete(opcode, [0x0C]) }
            let own = try r.u8()
            let policy = try r.u8()
            let phys = try r.u8()
            guard own <= 3, policy <= 3, phys != 0, phys & ~0x05 == 0 else { throw ParameterReader.Short() }
            // Only the 1M PHY here: scanning on Coded is an unsupported feature.
            guard phys & 0x04 == 0 else { return complete(opcode, [0x11]) }
            let type = try r.u8()
            let interval = try r.u16()
            let window = try r.u16()
            guard r.remaining == 0, type <= 1, interval >= 0x0004, (0x0004...interval).contains(window) else { throw ParameterReader.Short() }
            guard scanner == nil else { return complete(opcode, [0x0C]) }
            scanParameters = ScanParameters(active: type == 1, ownAddressType: own, filterPolicy: policy)
            complete(opcode, [0x00])
        case 0x2042: // LE Set Extended Scan Enable
            guard try admit(6, .extended) else { return complete(opcode, [0x0C]) }
            let enable = try r.u8()
            let duplicates = try r.u8()
            let duration = try r.u16()
            let period = try r.u16()
            guard enable <= 1, duplicates <= 2 else { throw ParameterReader.Short() }
            if enable == 1 {
                // Periodic scanning (a period) is not something this controller does.
                guard period == 0 else { return complete(opcode, [0x11]) }
                guard scanParameters.ownAddressType & 0x01 == 0 || randomAddress != nil else { throw ParameterReader.Short() }
                startScanning(active: scanParameters.active, filterPolicy: scanParameters.filterPolicy, duplicates: duplicates != 0,
                              extended: true, duration: duration == 0 ? nil : .milliseconds(10 * Int64(duration)), at: now)
            } else {
                scanner = nil
                listeningChanged(at: now)
            }
            complete(opcode, [0x00])
        case 0x2043: // LE Extended Create Connection
            guard decide(.extended) else { return status(opcode, 0x0C) }
            let policy = try r.u8()
            let own = try r.u8()
            let (peerType, peer) = try r.address()
            let phys = try r.u8()
            guard policy <= 1, own <= 3, peerType <= 3, phys != 0, phys & ~0x07 == 0,
                  r.remaining == 16 * phys.nonzeroBitCount else { throw ParameterReader.Short() }
            guard phys & 0x01 != 0 else { return status(opcode, 0x11) }
            // The 1M parameters come first; those for 2M and Coded follow and are not used here.
            let scanInterval = try r.u16()
            let scanWindow = try r.u16()
            let minimum = try r.u16()
            let maximum = try r.u16()
            let latency = try r.u16()
            let timeout = try r.u16()
            guard scanInterval >= 0x0004, (0x0004...scanInterval).contains(scanWindow),
                  Self.validConnection(minimum, maximum, latency, timeout) else { throw ParameterReader.Short() }
            try initiate(Initiator(filterPolicy: policy, peer: peer, ownAddressType: own, minInterval: minimum, maxInterval: maximum,
                                   latency: latency, timeout: timeout, extended: true), opcode: opcode, at: now)
        default:
            unknown(opcode)
        }
    }

    // MARK: helpers

    /// The encryption start procedure (Vol 6 Part B §5.1.3) with the peripheral's side played by
    /// the virtual peripheral: its key against the host's. The same key (or a peripheral that
    /// simulates, a replay) encrypts the link: Encryption Change, or Encryption Key Refresh
    /// Complete on a link already encrypted (Vol 4 Part E §7.7.8, §7.7.39). No key is 0x06 PIN or
    /// Key Missing with the link unencrypted; a different key fails the first packet's MIC and
    /// ends the link with 0x3D. Nothing is enciphered here: the virtual air carries plain bytes.
    private mutating func startEncryption(_ handle: UInt16, key: EncryptionKey, at now: Duration) {
        guard let link = links[handle] else { return }
        let answer = slots[link.slot].peripheral.encryptionRequested(ediv: key.ediv, rand: key.rand, at: now)
        switch answer {
        case .none:
            if link.encrypted {
                emit(0x30, [0x06] + LittleEndian.u16(handle))
            } else {
                emit(0x08, [0x06] + LittleEndian.u16(handle) + [0x00])
            }
        case .key(let peripheralKey) where peripheralKey != key.ltk:
            endLink(handle, hostReason: 0x3D, peripheralReason: 0x3D, at: now)
        case .key, .simulated:
            links[handle]?.encrypted = true
            if link.encrypted {
                emit(0x30, [0x00] + LittleEndian.u16(handle))
            } else {
                emit(0x08, [0x00] + LittleEndian.u16(handle) + [0x01])
            }
            perform(slots[link.slot].peripheral.encrypted(at: now), slot: link.slot, at: now)
        }
    }

    /// Whether a command of `family` may be used now; the first one used decides until Reset.
    private mutating func decide(_ family: CommandFamily) -> Bool {
        if commandFamily == .undecided { commandFamily = family }
        return commandFamily == family
    }

    private var acceptListInUse: Bool {
        (scanner.map { $0.filterPolicy & 0x01 != 0 } ?? false) || (initiator.map { $0.filterPolicy == 1 } ?? false)
    }

    /// Connection parameters within the specification's ranges (§7.8.12), judged by the same
    /// rule our host applies to a peripheral's request (`ConnectionParameters.problem`).
    static func validConnection(_ minimum: UInt16, _ maximum: UInt16, _ latency: UInt16, _ timeout: UInt16) -> Bool {
        ConnectionParameters(minInterval: minimum, maxInterval: maximum, latency: latency, supervisionTimeout: timeout).problem == nil
    }

    private mutating func startScanning(active: Bool, filterPolicy: UInt8, duplicates: Bool, extended: Bool, duration: Duration?,
                                        at now: Duration) {
        scanGeneration += 1
        scanner = Scanner(active: active, filterPolicy: filterPolicy, filterDuplicates: duplicates, extended: extended)
        if let duration { timers.add(.scanEnded(generation: scanGeneration), at: now + duration) }
        listeningChanged(at: now)
    }

    private mutating func initiate(_ request: Initiator, opcode: UInt16, at now: Duration) throws(ParameterReader.Short) {
        guard initiator == nil else { return status(opcode, 0x0C) }
        guard request.ownAddressType & 0x01 == 0 || randomAddress != nil else { throw ParameterReader.Short() }
        if let peer = request.peer, request.filterPolicy == 0, links.values.contains(where: { $0.peer == peer }) {
            return status(opcode, 0x0B) // Connection Already Exists
        }
        guard freeHandle() != nil else { return status(opcode, 0x09) } // Connection Limit Exceeded
        initiator = request
        status(opcode, 0x00)
        listeningChanged(at: now)
    }

    /// The new parameters apply at an instant some connection events later (Vol 6 Part B §5.1.1:
    /// at least six), when LE Connection Update Complete reports them.
    private mutating func scheduleUpdate(_ handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16, at now: Duration) {
        guard let link = links[handle] else { return }
        links[handle]?.updatePending = true
        let instant = now + .microseconds(1250 * 6 * Int64(link.interval))
        timers.add(.connectionUpdate(handle: handle, serial: link.serial, interval: interval, latency: latency, timeout: timeout), at: instant)
    }

    /// Reset (§7.3.2): every link, scan and connection attempt ends without events, masks and
    /// addresses go back to their defaults. The peripherals see their links time out.
    private mutating func reset(at now: Duration) {
        for (handle, link) in links.sorted(by: { $0.key < $1.key }) {
            _ = handle
            slots[link.slot].handle = nil
            slots[link.slot].peripheral.linkDown(reason: 0x08, at: now)
        }
        links = [:]
        buffersInUse = 0
        completed = []
        timers.removeAll()
        scanner = nil
        initiator = nil
        listeningChanged(at: now)
        eventMask = Self.defaultEventMask
        leEventMask = Self.defaultLEEventMask
        leHostSupported = false
        randomAddress = nil
        commandFamily = .undecided
        scanParameters = ScanParameters()
        acceptList = []
    }
}
