import BLEProtocol
import HAL
import Peripherals
import HALFakes
import Transports

/// What the controller counted, for tests and for anyone wondering where a packet went.
package struct ControllerCounters: Hashable, Sendable {
    package var commands = 0
    /// Answered Unknown HCI Command (0x01).
    package var unknownCommands = 0
    /// Answered Invalid HCI Command Parameters (0x12).
    package var invalidCommands = 0
    /// Bytes that were not H4 (each time the stream lost sync: one Hardware Error).
    package var hardwareErrors = 0
    package var aclFromHost = 0
    package var aclToHost = 0
    /// ACL packets for no link, longer than the buffers, or from a host that ignored its credits.
    package var droppedHostPackets = 0
    /// Packets the host sent with no buffer free (each got a Data Buffer Overflow event).
    package var bufferOverflows = 0
    /// The most LE ACL buffers the host ever had filled at once.
    package var mostBuffersInUse = 0
    package var droppedReports = 0
    /// Frames a peripheral sent while its link's backlog was full.
    package var droppedFrames = 0
    /// Events that found the host queue at its hard limit.
    package var droppedEvents = 0

    package init() {}
}

/// The virtual LE controller as a value (sans-IO): fed the bytes the host writes and the time,
/// it keeps what a controller keeps — event masks, the scanner and initiator, links, LE ACL
/// buffers and their credits — runs the virtual peripherals, and queues the H4 bytes a real
/// controller would send back. `VirtualController` wraps it in a stream and a timer.
///
/// Facts about what a controller answers come from the Core Specification 5.3, Vol 4 Part E
/// (HCI) and Vol 6 Part B (link layer); section numbers are given where they decide something.
struct ControllerCore {
    let configuration: ControllerConfiguration
    var slots: [Slot]
    var counters = ControllerCounters()

    var framer = H4Framer()
    var out = HostQueue()

    // What the host set.
    var eventMask = Self.defaultEventMask
    var leEventMask = Self.defaultLEEventMask
    var leHostSupported = false
    var randomAddress: BLEAddress?
    /// Legacy and extended scanning/initiating commands may not be mixed without a Reset
    /// (Vol 4 Part E §3.1.1): whichever the host uses first decides.
    var commandFamily = CommandFamily.undecided
    var scanParameters = ScanParameters()
    var scanner: Scanner?
    var initiator: Initiator?
    var acceptList: [BLEAddress] = []

    var links: [UInt16: Link] = [:]
    var buffersInUse = 0
    /// Packets sent since the last Number Of Completed Packets, per handle in the order first completed.
    var completed: [(handle: UInt16, count: Int)] = []
    var timers = SimulationSchedule<Timer>(capacity: 512)
    var nextSerial: UInt64 = 1
    var scanGeneration: UInt64 = 0
    var random: UInt64

    /// Set Event Mask's default after Reset: bits 0–44 (Vol 4 Part E §7.3.1); LE Meta is not among them.
    static let defaultEventMask: UInt64 = 0x0000_1FFF_FFFF_FFFF
    /// LE Set Event Mask's default: the first five LE subevents (§7.8.1).
    static let defaultLEEventMask: UInt64 = 0x0000_0000_0000_001F

    enum CommandFamily { case undecided, legacy, extended }

    struct Slot {
        var peripheral: any VirtualPeripheral
        var handle: UInt16?
        /// The next advertising event anyone could hear; nil while nobody scans or initiates.
        var nextAdvertisingEvent: Duration?
        /// The latest event that happened while someone listened: an event happens once.
        var lastAdvertisingEvent: Duration?
    }

    struct ScanParameters {
        var active = false
        var ownAddressType: UInt8 = 0
        var filterPolicy: UInt8 = 0
    }

    struct Scanner {
        var active: Bool
        var filterPolicy: UInt8
        var filterDuplicates: Bool
        var extended: Bool
        /// Addresses reported since scanning was enabled, for duplicate filtering; bounded like a
        /// controller's cache (when full it forgets, and reports again).
        var reported: Set<[UInt8]> = []
    }

    struct Initiator {
        var filterPolicy: UInt8
        var peer: BLEAddress?
        var ownAddressType: UInt8
        var minInterval: UInt16
        var maxInterval: UInt16
        var latency: UInt16
        var timeout: UInt16
        var extended: Bool
    }

    struct Link {
        var handle: UInt16
        var slot: Int
        /// Tells this link's timers from those of an earlier link with the same (reused) handle.
        var serial: UInt64
        var peer: BLEAddress
        var interval: UInt16
        var latency: UInt16
        var timeout: UInt16
        var reassembler = ACLReassembler()
        /// Packets from the host waiting for their connection event (with `airDelay`).
        var waiting: [(packet: ACLPacket, due: Duration)] = []
        /// Frames for a host that is not reading fast enough.
        var backlog: [L2CAPFrame] = []
        var backlogHead = 0
        /// No more data either way: the peripheral went quiet (supervision will end the link), or
        /// the host asked to disconnect and the link is being torn down.
        var lost = false
        var terminating = false
        var parameterRequest = false
        var updatePending = false
        /// Encrypted (LE Enable Encryption succeeded): a second start is a key refresh.
        var encrypted = false
        /// What the peripheral asked for as the link came up: it goes at the first connection event.
        var firstEvent: [PeripheralAction] = []

        var backlogCount: Int { backlog.count - backlogHead }
    }

    enum Timer: Sendable {
        case air(handle: UInt16, serial: UInt64)
        case supervision(handle: UInt16, serial: UInt64)
        case terminated(handle: UInt16, serial: UInt64, reason: UInt8)
        case firstConnectionEvent(handle: UInt16, serial: UInt64)
        case connectionUpdate(handle: UInt16, serial: UInt64, interval: UInt16, latency: UInt16, timeout: UInt16)
        case scanEnded(generation: UInt64)
    }

    init(configuration: ControllerConfiguration, peripherals: [any VirtualPeripheral]) {
        self.configuration = configuration
        slots = peripherals.map { Slot(peripheral: $0) }
        random = configuration.randomSeed | 1
    }

    // MARK: the host's side

    var hasOutput: Bool { !out.isEmpty }

    /// Bytes from the host, in any chunks.
    mutating func hostWrote(_ bytes: [UInt8], at now: Duration) {
        let packets: [HCIPacket]
        do {
            packets = try framer.feed(bytes)
        } catch {
            // Lost sync (Vol 4 Part A §3, UART transport): nothing after it can be trusted. A UART
            // controller reports a Hardware Error and waits to be reset; the framer starts afresh.
            counters.hardwareErrors += 1
            framer.reset()
            emit(0x10, [0x01])
            settle(now)
            return
        }
        for packet in packets {
            switch packet {
            case .command(let command): self.command(command, at: now)
            case .acl(let acl): hostACL(acl, at: now)
            case .event, .other: counters.droppedHostPackets += 1
            }
        }
        settle(now)
    }

    /// The next chunk for the host, and room made for what was held back.
    mutating func takeOutput(upTo limit: Int, at now: Duration) -> [UInt8]? {
        let chunk = out.pop(upTo: limit)
        if chunk != nil { refill(at: now) }
        return chunk
    }

    // MARK: time

    var nextDeadline: Duration? {
        var earliest = timers.nextDeadline
        func consider(_ deadline: Duration?) {
            guard let deadline else { return }
            earliest = earliest.map { min($0, deadline) } ?? deadline
        }
        for slot in slots {
            consider(slot.peripheral.nextDeadline)
            consider(slot.nextAdvertisingEvent)
        }
        return earliest
    }

    /// Runs everything due by `now` in the order it fell due — the controller's own timers,
    /// advertising events, the peripherals' schedules — so a clock that jumps far ahead replays
    /// the same story as one that moved step by step. Bounded: what is left stays due, and the
    /// driver's timer comes straight back for it.
    mutating func advance(to now: Duration) {
        for _ in 0..<256 {
            guard let due = earliestDue(by: now) else { break }
            switch due {
            case .timer:
                if let timer = timers.popDue(at: now) { fire(timer, at: now) }
            case .peripheral(let index):
                let actions = slots[index].peripheral.advance(to: now)
                perform(actions, slot: index, at: now)
            case .advertising(let index):
                advertisingEvent(index, at: now)
            }
        }
        settle(now)
    }

    private enum Due { case timer, peripheral(Int), advertising(Int) }

    /// The earliest thing due by `now`; at equal times the controller's timers, then the
    /// peripherals, then advertising, each in slot order.
    private func earliestDue(by now: Duration) -> Due? {
        var best: (time: Duration, rank: Int, due: Due)?
        func consider(_ time: Duration?, _ rank: Int, _ due: Due) {
            guard let time, time <= now else { return }
            if let current = best, (current.time, current.rank) <= (time, rank) { return }
            best = (time, rank, due)
        }
        consider(timers.nextDeadline, 0, .timer)
        for index in slots.indices {
            consider(slots[index].peripheral.nextDeadline, 1 + index, .peripheral(index))
            consider(slots[index].nextAdvertisingEvent, 1 + slots.count + index, .advertising(index))
        }
        return best?.due
    }

    private mutating func fire(_ timer: Timer, at now: Duration) {
        switch timer {
        case .air(let handle, let serial):
            guard var link = links[handle], link.serial == serial else { return }
            var due: [ACLPacket] = []
            while let first = link.waiting.first, first.due <= now {
                due.append(first.packet)
                link.waiting.removeFirst()
            }
            links[handle] = link
            for packet in due { transmit(packet, at: now) }
        case .supervision(let handle, let serial):
            guard let link = links[handle], link.serial == serial else { return }
            endLink(handle, hostReason: 0x08, peripheralReason: 0x08, at: now)
        case .firstConnectionEvent(let handle, let serial):
            guard let link = links[handle], link.serial == serial else { return }
            links[handle]?.firstEvent = []
            perform(link.firstEvent, slot: link.slot, at: now)
        case .terminated(let handle, let serial, let reason):
            guard let link = links[handle], link.serial == serial else { return }
            endLink(handle, hostReason: 0x16, peripheralReason: reason, at: now)
        case .connectionUpdate(let handle, let serial, let interval, let latency, let timeout):
            guard var link = links[handle], link.serial == serial else { return }
            link.interval = interval
            link.latency = latency
            link.timeout = timeout
            link.updatePending = false
            links[handle] = link
            emitLE(0x03, [0x00] + LittleEndian.u16(handle) + LittleEndian.u16(interval) + LittleEndian.u16(latency) + LittleEndian.u16(timeout))
            let actions = slots[link.slot].peripheral.linkChanged(
                .parametersUpdated(interval: interval, latency: latency, supervisionTimeout: timeout), at: now)
            perform(actions, slot: link.slot, at: now)
        case .scanEnded(let generation):
            guard scanner != nil, generation == scanGeneration else { return }
            scanner = nil
            listeningChanged(at: now)
            emitLE(0x11, []) // LE Scan Timeout
        }
    }

    /// After each step: completed packets are reported, and what waited for room goes out.
    mutating func settle(_ now: Duration) {
        flushCompleted()
        refill(at: now)
    }

    // MARK: events

    /// Command Complete and Command Status carry the controller's command credits.
    mutating func complete(_ opcode: UInt16, _ returnParameters: [UInt8]) {
        emit(0x0E, [configuration.commandCredits] + LittleEndian.u16(opcode) + returnParameters)
    }

    mutating func status(_ opcode: UInt16, _ code: UInt8) {
        emit(0x0F, [code, configuration.commandCredits] + LittleEndian.u16(opcode))
    }

    /// An event, unless the host masked it. Command Complete, Command Status and Number Of
    /// Completed Packets always go: a host cannot work without them.
    mutating func emit(_ code: UInt8, _ parameters: [UInt8], droppable: Bool = false) {
        if ![0x0E, 0x0F, 0x13].contains(code), code >= 1, code <= 64, eventMask & (1 << UInt64(code - 1)) == 0 { return }
        sendToHost(HCIPacket.event(HCIEventPacket(code: code, parameters: parameters)).h4Bytes, droppable: droppable)
    }

    /// An LE Meta subevent, when both LE Meta and the subevent are unmasked.
    mutating func emitLE(_ subevent: UInt8, _ body: [UInt8], droppable: Bool = false) {
        guard subevent >= 1, eventMask & (1 << 61) != 0, leEventMask & (1 << UInt64(subevent - 1)) != 0 else { return }
        emit(0x3E, [subevent] + body, droppable: droppable)
    }

    func isUnmaskedLE(_ subevent: UInt8) -> Bool {
        eventMask & (1 << 61) != 0 && leEventMask & (1 << UInt64(subevent - 1)) != 0
    }

    /// Queues bytes for the host. Advertising reports are dropped once the queue is past its soft
    /// limit (a controller with full buffers drops reports, Vol 6 Part B §4.4.3), anything past
    /// the hard limit (a host that never reads).
    mutating func sendToHost(_ bytes: [UInt8], droppable: Bool) {
        if droppable, out.bytes >= configuration.hostQueueSoftLimit {
            counters.droppedReports += 1
            return
        }
        guard out.bytes < configuration.hostQueueHardLimit else {
            counters.droppedEvents += 1
            return
        }
        out.push(bytes)
    }

    mutating func flushCompleted() {
        guard !completed.isEmpty else { return }
        // At most 255 handles per event; links are far fewer.
        let entries = completed.prefix(255)
        completed.removeAll()
        var parameters: [UInt8] = [UInt8(entries.count)]
        for entry in entries { parameters += LittleEndian.u16(entry.handle) + LittleEndian.u16(UInt16(clamping: entry.count)) }
        emit(0x13, parameters)
    }

    mutating func random64() -> UInt64 {
        // xorshift64*: deterministic, seeded by the configuration.
        random ^= random >> 12
        random ^= random << 25
        random ^= random >> 27
        return random &* 0x2545_F491_4F6C_DD1D
    }
}
