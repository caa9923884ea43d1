import BLEProtocol
import HAL
import Transports

/// How a replay keeps the recorded timing.
public enum ReplayTiming: Hashable, Sendable {
    /// Answers come after the delays they had in the recording.
    case recorded
    /// The recorded delays times `factor` (0.1: ten times faster).
    case scaled(Double)
    /// Every answer at once, in the recorded order: for unit tests that only care what is said.
    case immediate

    /// How long to wait before an answer that came `recorded` after its request in the cassette.
    func delay(_ recorded: Duration) -> Duration {
        switch self {
        case .recorded: recorded
        case .scaled(let factor): recorded * max(0, factor)
        case .immediate: .zero
        }
    }
}

/// A recorded peripheral (`BLECassette.Peripheral`) played on the virtual radio: it advertises
/// what was recorded, when it was recorded, and answers each ATT request with what the recorded
/// peripheral answered to the same request — followed by the notifications, indications and the
/// disconnect that came after it, with their recorded delays.
///
/// Requests are matched in order: the first recorded exchange not yet played whose request is
/// the same bytes; a write of another value to the same handle takes that handle's next recorded
/// write (with one warning naming both values, unless the cassette marks the handle `varying`);
/// a request asked again after its recording ran out gets the last answer again; a request the
/// recording never saw gets ATT error 0x06 Request Not Supported and one warning. When every
/// recorded exchange has been played and the central stays on, waiting for more, the replay
/// says the recording ends here and ends the link after `endGrace` of silence, so whoever waits
/// learns it at once instead of at its own deadline (issue 27, item 17).
package struct ReplayPeripheral: VirtualPeripheral {
    /// How long a central may stay on, asking nothing, after the recording's last exchange.
    package static let endGrace: Duration = .seconds(3)

    package let address: BLEAddress
    package private(set) var advertising: VirtualAdvertising
    package private(set) var connected = false
    /// How many connections have been made to it so far.
    package private(set) var connectionsMade = 0

    private let recorded: BLECassette.Peripheral
    private let timing: ReplayTiming
    private let warn: @Sendable (String) -> Void
    private var warned: Set<String> = []
    private var conversation: Conversation?
    /// What is due to the central, in the order it must go.
    private var scheduled: [(due: Duration, step: Conversation.Step)] = []
    /// When the advertising next changes (a broadcasting scale's reading), from the recording.
    private var advertisingChanges: [(at: Duration, advertising: VirtualAdvertising)]
    /// When the link ends for want of recording, unless the central asks something first.
    private var recordingRunsOut: Duration?
    /// Pairing and encryption on the current connection, as recorded (simulated, no keys).
    private var security: ReplaySecurity
    /// The central of the current link (the Security Manager's peer).
    private var central: BLEAddress?
    /// The security the live link has: a recorded protected value is given only with it.
    private var linkLevel = SecurityLevel.none
    /// The current connection's protected requests (``Conversation/protectedRequests``).
    private var protected: [[UInt8]: UInt8] = [:]

    /// `warn` hears each difference from the recording once (the CLI prints it on stderr).
    package init(_ recorded: BLECassette.Peripheral, timing: ReplayTiming = .recorded, warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.recorded = recorded
        self.address = recorded.address
        self.timing = timing
        self.warn = warn
        let timeline = Self.advertisingTimeline(recorded.advertising)
        advertising = timeline.first?.advertising
            ?? VirtualAdvertising(form: .legacy(advertisingData: [], scanResponse: []))
        advertisingChanges = Array(timeline.dropFirst())
        security = ReplaySecurity(nil, localAddress: recorded.address, warn: warn)
    }

    package var isAdvertising: Bool { !connected }

    package var nextDeadline: Duration? {
        [scheduled.first?.due, connected ? nil : advertisingChanges.first?.at, recordingRunsOut, security.deadline].compactMap { $0 }.min()
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        while let change = advertisingChanges.first, change.at <= now {
            advertising = change.advertising
            advertisingChanges.removeFirst()
        }
        if let end = recordingRunsOut, end <= now {
            recordingRunsOut = nil
            if connected, scheduled.isEmpty, conversation?.isFinished == true {
                warn("replay: the recording of \(recorded.address) ends here: nothing more was recorded on this connection, so the link is ended")
                return [.disconnect(reason: 0x13)]
            }
        }
        return security.advance(to: now) + due(at: now)
    }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        // The n-th connection plays the n-th recorded one (the last again when there are more).
        let index = min(connectionsMade, recorded.connections.count - 1)
        connectionsMade += 1
        scheduled = []
        central = link.central
        linkLevel = .none
        protected = [:]
        security = ReplaySecurity(index >= 0 ? recorded.connections[index] : nil, localAddress: address, warn: warn)
        guard index >= 0 else {
            conversation = Conversation(BLECassette.Connection(at: .zero))
            return []
        }
        var conversation = Conversation(recorded.connections[index])
        protected = conversation.protectedRequests
        schedule(conversation.prelude, from: now)
        conversation.prelude = []
        self.conversation = conversation
        return due(at: now)
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        conversation = nil
        scheduled = []
        recordingRunsOut = nil
        security.linkDown()
        // Advertising resumes as it was last recorded: changes that fell due meanwhile apply now.
        while let change = advertisingChanges.first, change.at <= now {
            advertising = change.advertising
            advertisingChanges.removeFirst()
        }
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        if frame.channel == L2CAPFrame.securityManager, let central {
            return security.received(frame.payload, central: central, at: now)
        }
        switch PeripheralChannels.route(frame) {
        case .att(let pdu): return answer(pdu, at: now)
        case .reply(let frame): return [.send(frame)]
        case .parameterUpdateAnswered, .nothing: return []
        }
    }

    package mutating func encryptionRequested(ediv: UInt16, rand: UInt64, at now: Duration) -> VirtualEncryptionKey {
        security.encryptionRequested(ediv: ediv, rand: rand, at: now)
    }

    package mutating func encrypted(at now: Duration) -> [PeripheralAction] {
        let actions = security.encrypted(at: now)
        linkLevel = security.liveLevel
        return actions
    }

    /// The live link's security, from a real central through `serve` (PeripheralHost).
    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] {
        linkLevel = level
        return []
    }

    // MARK: answering

    private mutating func answer(_ pdu: [UInt8], at now: Duration) -> [PeripheralAction] {
        guard var conversation, let opcode = pdu.first else { return [] }
        recordingRunsOut = nil
        guard Conversation.isRequest(opcode) else { return [] } // a confirmation, or our host's answer to a request of the peer's
        // A value the recorded device gave only on a secured link: refused as it refused it
        // until the live link has the security the recorded one had.
        if let code = protected[pdu] {
            guard linkLevel >= security.recordedLevel else {
                let error = ATTPDU.errorResponse(requestOpcode: opcode, handle: Conversation.handle(of: pdu), code: code)
                schedule([(Duration.zero, .pdu(error.encoded))], from: now)
                return due(at: now)
            }
        }
        let match = protected[pdu] != nil ? conversation.matchSecured(pdu) : conversation.match(pdu)
        self.conversation = conversation
        switch match {
        case .exact(let steps):
            schedule(steps, from: now)
        case .differentValue(let steps, let recordedValue):
            let handle = Conversation.handle(of: pdu)
            if !recorded.varying.contains(handle) {
                warnOnce("value:\(handle)", "replay: the write to handle \(hex16(handle)) of \(recorded.address) was "
                         + "\(hexBytes(recordedValue)) in the recording, now \(hexBytes(Array(pdu.dropFirst(3)))); answered as recorded")
            }
            schedule(steps, from: now)
        case .none:
            let handle = Conversation.handle(of: pdu)
            let name = ATTPDU.name(ofOpcode: opcode)
            warnOnce("unseen:\(pdu)", "replay: the recording of \(recorded.address) never saw \(name)"
                     + (pdu.count >= 3 ? " for handle \(hex16(handle))" : "") + " (\(hexBytes(pdu)))"
                     + (ATTPDU.responseOpcode(forRequest: opcode) != nil ? "; answered with ATT error 0x06 Request Not Supported" : "; ignored"))
            if ATTPDU.responseOpcode(forRequest: opcode) != nil {
                let error = ATTPDU.errorResponse(requestOpcode: opcode, handle: pdu.count >= 3 ? handle : 0, code: 0x06)
                schedule([(Duration.zero, .pdu(error.encoded))], from: now)
            }
        }
        return due(at: now)
    }

    private mutating func schedule(_ steps: [(offset: Duration, step: Conversation.Step)], from now: Duration) {
        for (offset, step) in steps {
            let due = now + timing.delay(offset)
            // After everything already due no later: the recorded order is kept.
            let index = scheduled.firstIndex { $0.due > due } ?? scheduled.endIndex
            scheduled.insert((due, step), at: index)
        }
    }

    private mutating func due(at now: Duration) -> [PeripheralAction] {
        var actions: [PeripheralAction] = []
        while let next = scheduled.first, next.due <= now {
            scheduled.removeFirst()
            switch next.step {
            case .pdu(let pdu):
                actions.append(PeripheralChannels.att(pdu))
            case .disconnect(let reason):
                // A link lost to supervision looks lost again; any other end is the peripheral's own.
                actions.append(reason == 0x08 ? .vanish : .disconnect(reason: reason))
                scheduled = []
                return actions
            }
        }
        if connected, scheduled.isEmpty, recordingRunsOut == nil, conversation?.isFinished == true {
            recordingRunsOut = now + Self.endGrace
        }
        return actions
    }

    private mutating func warnOnce(_ key: String, _ message: String) {
        guard warned.insert(key).inserted else { return }
        warn(message)
    }

    // MARK: advertising

    /// One `VirtualAdvertising` per moment the recorded advertising changed, the first at the
    /// time it was first heard. The first scan response after an advertisement joins it (they
    /// are one advertising event on the air); a later change of either is a moment of its own.
    package static func advertisingTimeline(_ records: [BLECassette.AdvertisingRecord]) -> [(at: Duration, advertising: VirtualAdvertising)] {
        var primary: BLECassette.AdvertisingRecord?
        var response: [UInt8] = []
        var responseJoined = false
        var timeline: [(at: Duration, advertising: VirtualAdvertising)] = []
        for record in records {
            var joins = false
            if record.kind == .scanResponse {
                joins = !responseJoined && !timeline.isEmpty
                responseJoined = true
                response = record.data
            } else {
                primary = record
                responseJoined = false
            }
            guard let primary else { continue }
            // A broadcaster that cannot be scanned has no scan response to give.
            let form: VirtualAdvertising.Form = primary.kind.isLegacy
                ? .legacy(advertisingData: primary.data, scanResponse: primary.kind == .nonConnectable ? [] : response)
                : .extended(data: primary.data)
            let advertising = VirtualAdvertising(form: form, firstEvent: timeline.first?.at ?? primary.at, rssi: primary.rssi,
                                                 connectable: primary.kind.connectable)
            if joins || timeline.last?.at == record.at {
                timeline[timeline.count - 1].advertising = advertising
            } else {
                timeline.append((record.at, advertising))
            }
        }
        return timeline
    }
}

/// `0x000E`: a handle as the warnings name it.
func hex16(_ value: UInt16) -> String { "0x" + Hex.word(value) }

/// A value as the warnings show it: lower-case hex, `(empty)` for none.
func hexBytes(_ bytes: [UInt8]) -> String { bytes.isEmpty ? "(empty)" : Hex.string(bytes, .lower) }
