import BLEProtocol
import HAL
import HALFakes
import Transports

/// The simulated bench's body-scan mirror as a GATT server (docs/mirror-gatt-v1.md): its attributes
/// and write checks are here, its behaviour is `MirrorSimulation`'s (the same one `FakeMirror`
/// carries for the flow tests), its notifications are the simulation's outputs.
package struct MirrorPeripheral: ControllablePeripheral {
    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    package private(set) var connected = false

    private var server: ATTServer
    private var behaviour: Behaviour
    /// A silenced mirror keeps its link and answers requests but sends nothing by itself.
    private var silent = false
    /// The last `scale` notified (`quiet-scale` notifies only changes of its flags).
    private var lastScale: ScaleStatus?
    /// `processes-while-occupied`: the last state notified, and the step-off held back until processing.
    private var lastState: MirrorScanState?
    private var heldStepOff: [UInt8]?

    /// The value handles of the profile's characteristics.
    package struct Handles: Hashable, Sendable {
        package var deviceInfo, initialize, scanToken, scanState, scale, alignment, control, result: UInt16
    }

    package let handles: Handles

    /// Ways to depart from docs/mirror-gatt-v1.md on purpose, so that `hwprobe check` can be shown to
    /// catch each (`sim:?deviation=…`).
    package enum Deviation: String, Sendable, Hashable, CaseIterable {
        /// Advertises without the mirror service UUID.
        case noServiceUUID = "no-service-uuid"
        /// `scale` notifies but has no CCCD.
        case missingCCCD = "missing-cccd"
        /// `alignment` is declared read only (it still notifies).
        case wrongProperty = "wrong-property"
        /// `deviceInfo` reports a battery of 150 %.
        case outOfRange = "out-of-range"
        /// `scanToken` before `init` is refused with 0x80 instead of 0x81.
        case wrongErrorCode = "wrong-error-code"
        /// Legacy advertising with the service UUIDs in the scan response and the manufacturer
        /// data and name in the advertisement (the other way round from the profile).
        case swappedScanResponse = "swapped-scan-response"
        /// Goes on advertising while a central is connected.
        case advertisesWhileConnected = "advertises-while-connected"
        /// Notifies whether or not the client wrote the CCCD.
        case notifiesUnsubscribed = "notifies-unsubscribed"
        /// Acts on Write Commands to `init`, `scanToken` and `control` (which only take requests).
        case honoursWriteCommand = "honours-write-command"
        /// A `scanToken` of the wrong length is refused with 0x13 instead of 0x0D.
        case wrongLengthCode = "wrong-length-code"
        /// Accepts confirm alignment while the scale is not aligned.
        case confirmsUnaligned = "confirms-unaligned"
        /// Never notifies stepOff (it still goes through it).
        case skipsStepOff = "skips-step-off"
        /// Processing takes 150 s, past a client's 120 s deadline.
        case slowProcessing = "slow-processing"
        /// `result` is 8 bytes: no point count.
        case shortResult = "short-result"
        /// `scale` notifies only when its flags change, not 5 times a second while occupied.
        case quietScale = "quiet-scale"
        /// Notifies `ready` with progress 50.
        case progressOutsideScan = "progress-outside-scan"
        /// A central that leaves mid-scan finds the mirror in `error` (code 5) on reconnecting.
        case staleAfterDisconnect = "stale-after-disconnect"
        /// Tells of the person stepping off only after it has notified processing (as a mirror
        /// that starts processing while someone is still on the scale would look to a client).
        case processesWhileOccupied = "processes-while-occupied"
        /// Takes abort in `complete` (success) but stays in `complete`.
        case ignoresAbortWhenComplete = "ignores-abort-when-complete"
    }

    package let deviations: Set<Deviation>

    /// `extendedAdvertising`: one extended advertisement with everything, instead of ADV_IND
    /// with a scan response (the profile's two forms; only extended scanners see the first).
    package init(script: MirrorScript = MirrorScript(), extendedAdvertising: Bool = false,
                interval: Duration = .milliseconds(100), firstAdvertisement: Duration = .milliseconds(150),
                deviations: Set<Deviation> = []) {
        address = script.address
        self.deviations = deviations
        var advertisement = script.advertisement
        if deviations.contains(.noServiceUUID) { advertisement.serviceUUIDs.removeAll { $0 == MirrorProfileValues.service } }
        var form = VirtualAdvertising.form(for: advertisement, extended: extendedAdvertising)
        if deviations.contains(.swappedScanResponse), !extendedAdvertising {
            var primary = advertisement, secondary = Advertisement()
            primary.serviceUUIDs = []
            secondary.serviceUUIDs = advertisement.serviceUUIDs
            form = .legacy(advertisingData: AdvertisingData.encode(primary), scanResponse: AdvertisingData.encode(secondary))
        }
        advertising = VirtualAdvertising(form: form, interval: interval, firstEvent: firstAdvertisement, rssi: script.rssi)
        var script = script
        if deviations.contains(.slowProcessing) { script.processingDuration = .seconds(150) }
        let database = Self.database(name: script.name, deviations: deviations)
        server = ATTServer(database: database, preferredMTU: ATTMTU.preferred)
        func handle(_ id: UInt8) -> UInt16 { database.valueHandle(of: MirrorProfileValues.uuid(id)) ?? 0 }
        handles = Handles(deviceInfo: handle(0x02), initialize: handle(0x03), scanToken: handle(0x04), scanState: handle(0x05),
                          scale: handle(0x06), alignment: handle(0x07), control: handle(0x08), result: handle(0x09))
        behaviour = Behaviour(simulation: MirrorSimulation(script: script), handles: handles, deviations: deviations)
    }

    /// The simulation, for tests that check what the mirror went through.
    package var simulation: MirrorSimulation { behaviour.simulation }
    package var database: AttributeDatabase { server.database }

    static func database(name: String, deviations: Set<Deviation> = []) -> AttributeDatabase {
        var builder = AttributeDatabase.Builder()
        let commands: Attribute.Permissions = deviations.contains(.honoursWriteCommand) ? .writeCommand : []
        builder.standardServices(deviceName: name, appearance: 0x0000)
        builder.service(MirrorProfileValues.service, [
            CharacteristicDefinition(MirrorProfileValues.uuid(0x02), .read),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x03), .write, extraPermissions: commands),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x04), .write, extraPermissions: commands),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x05), [.read, .notify]),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x06), [.read, .notify], omitClientConfiguration: deviations.contains(.missingCCCD)),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x07), [.read, .notify],
                                     declaredProperties: deviations.contains(.wrongProperty) ? .read : nil),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x08), .write, extraPermissions: commands),
            CharacteristicDefinition(MirrorProfileValues.uuid(0x09), .read),
        ])
        return builder.build()
    }

    // MARK: VirtualPeripheral

    /// "A mirror advertises only while no central is connected to it."
    package var isAdvertising: Bool { !connected || deviations.contains(.advertisesWhileConnected) }
    package var advertisesWhileConnected: Bool { deviations.contains(.advertisesWhileConnected) }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        connected = true
        silent = false
        lastScale = nil
        server.reset()
        return notifications(behaviour.simulation.connect(at: now))
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        connected = false
        server.reset()
        if deviations.contains(.staleAfterDisconnect), [.scanning, .stepOff, .processing].contains(behaviour.simulation.state) {
            behaviour.stale = MirrorScanStatus(state: .error, error: .mirrorTimedOut)
        }
        behaviour.simulation.disconnected()
    }

    package var nextDeadline: Duration? { connected ? behaviour.simulation.nextDeadline : nil }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        guard connected else { return [] }
        return notifications(behaviour.simulation.advance(to: now))
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu):
            behaviour.now = now
            let answers = server.receive(pdu, behaviour: &behaviour, at: now).map(PeripheralChannels.att)
            let said = behaviour.outputs
            behaviour.outputs = []
            return answers + notifications(said)
        case .reply(let frame):
            return [.send(frame)]
        case .parameterUpdateAnswered, .nothing:
            return []
        }
    }

    package var attributeDatabase: AttributeDatabase? { server.database }

    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] {
        server.setLinkSecurity(level)
        return []
    }

    // MARK: ControllablePeripheral

    /// Whether the person at the keyboard moved the scale out of line, or ran the battery down.
    private var outOfLine = false
    private var batteryLow = false

    package var controls: [PeripheralControl] {
        [PeripheralControl(key: "s", label: "step on/off"),
         PeripheralControl(key: "a", label: outOfLine ? "scale back in line" : "scale out of line"),
         PeripheralControl(key: "b", label: batteryLow ? "battery back" : "low battery"),
         PeripheralControl(key: "1", keys: "1–6", label: "mirror error"),
         PeripheralControl(key: "d", label: "drop the link")]
    }

    package var stateSummary: String {
        let simulation = behaviour.simulation
        var parts = ["\(simulation.state)"]
        if simulation.state == .scanning || simulation.state == .processing { parts[0] += " \(simulation.progress) %" }
        if let error = simulation.errorCode { parts.append("error \(error.code)") }
        let scale = simulation.scale
        if scale.present {
            parts.append(scale.occupied ? "scale occupied \(kilogramsText(scale.kilograms))" + (scale.stable ? " stable" : "") : "scale empty")
        } else {
            parts.append("scale off")
        }
        parts.append(simulation.alignment.aligned ? "aligned" : "not aligned")
        if let battery = simulation.batteryPercent { parts.append("battery \(battery) %") }
        return parts.joined(separator: " · ")
    }

    package mutating func perform(_ key: Character, at now: Duration) -> [PeripheralAction] {
        let action: MirrorSimulation.ManualAction
        switch key {
        case "s": action = behaviour.simulation.scale.occupied ? .stepOff : .stepOn
        case "a":
            outOfLine.toggle()
            action = .scaleOutOfLine(outOfLine)
        case "b":
            batteryLow.toggle()
            action = .lowBattery(batteryLow)
        case "1"..."6":
            action = .error(MirrorErrorCode(code: key.asciiValue.map { $0 - 0x30 } ?? 1))
        case "d": action = .dropLink
        default: return []
        }
        return notifications(behaviour.simulation.act(action, at: now))
    }

    /// The simulation's outputs as the air carries them: notifications to a subscribed client.
    private mutating func notifications(_ outputs: [MirrorSimulation.Output]) -> [PeripheralAction] {
        var actions: [PeripheralAction] = []
        for output in outputs {
            let pdu: [UInt8]?
            switch output {
            case .scanState(let status):
                if deviations.contains(.skipsStepOff), status.state == .stepOff { continue }
                var value = MirrorProfileValues.scanState(status)
                if deviations.contains(.progressOutsideScan), status.state == .ready { value[1] = 50 }
                lastState = status.state
                pdu = silent ? nil : notification(handles.scanState, value)
                if let held = heldStepOff, status.state == .processing {
                    heldStepOff = nil
                    if let pdu { actions.append(PeripheralChannels.att(pdu)) }
                    if !silent, let stepOff = notification(handles.scale, held) { actions.append(PeripheralChannels.att(stepOff)) }
                    continue
                }
            case .scale(let status):
                if deviations.contains(.quietScale), let last = lastScale, MirrorProfileValues.scale(last).first == MirrorProfileValues.scale(status).first { continue }
                lastScale = status
                if deviations.contains(.processesWhileOccupied), lastState == .stepOff, !status.occupied {
                    heldStepOff = MirrorProfileValues.scale(status)
                    continue
                }
                pdu = silent ? nil : notification(handles.scale, MirrorProfileValues.scale(status))
            case .alignment(let alignment):
                pdu = silent ? nil : notification(handles.alignment, MirrorProfileValues.alignment(alignment))
            case .silenced:
                silent = true
                pdu = nil
            case .dropLink(let reason):
                actions.append(.disconnect(reason: reason.hciReason))
                pdu = nil
            }
            if let pdu { actions.append(PeripheralChannels.att(pdu)) }
        }
        return actions
    }

    /// A notification of `value`, if the client subscribed (or, deviating, whether or not).
    private func notification(_ handle: UInt16, _ value: [UInt8]) -> [UInt8]? {
        if deviations.contains(.notifiesUnsubscribed) { return ATTPDU.handleValueNotification(handle: handle, value: value).encoded }
        return server.notification(valueHandle: handle, value: value)
    }

    // MARK: the attributes' behaviour

    /// What stands behind the dynamic attributes: reads of the simulation's state, and the
    /// profile's checks on each write before the simulation sees the command.
    struct Behaviour: ATTServerBehaviour {
        var simulation: MirrorSimulation
        let handles: Handles
        var deviations: Set<Deviation> = []
        var now = Duration.zero
        var outputs: [MirrorSimulation.Output] = []
        /// What `stale-after-disconnect` reports instead of the state, until a `control` write.
        var stale: MirrorScanStatus?

        mutating func read(_ handle: UInt16) -> Result<[UInt8], ATTRefusal> {
            switch handle {
            case handles.deviceInfo:
                var info = simulation.readInfo()
                if deviations.contains(.outOfRange) { info.batteryPercent = 150 }
                return .success(MirrorProfileValues.deviceInfo(info))
            case handles.scanState: return .success(MirrorProfileValues.scanState(stale ?? simulation.scanStatus))
            case handles.scale: return .success(MirrorProfileValues.scale(simulation.scale))
            case handles.alignment: return .success(MirrorProfileValues.alignment(simulation.alignment))
            case handles.result:
                do {
                    let value = MirrorProfileValues.result(try simulation.result())
                    return .success(deviations.contains(.shortResult) ? Array(value.prefix(8)) : value)
                } catch { return .failure(.readNotPermitted) }
            default: return .failure(.readNotPermitted)
            }
        }

        mutating func write(_ value: [UInt8], to handle: UInt16, withResponse: Bool) -> ATTRefusal? {
            // A Write Command to a characteristic that only takes Write Requests is ignored (the
            // server never gets here for those); none of the profile's take commands.
            guard withResponse || deviations.contains(.honoursWriteCommand) else { return nil }
            let command: MirrorCommand
            switch handle {
            case handles.initialize:
                guard value.count == 4 else { return .invalidLength }
                guard value[0] == 0x01, let units = MeasurementSystem(rawValue: value[3]) else { return .valueNotAllowed }
                command = .initialize(heightMillimetres: UInt16(value[1]) | UInt16(value[2]) << 8, units: units)
            case handles.scanToken:
                guard value.count == 16 else { return deviations.contains(.wrongLengthCode) ? .valueNotAllowed : .invalidLength }
                command = .scanToken(value)
            case handles.control:
                guard value.count == 1 else { return .invalidLength }
                stale = nil
                switch value[0] {
                case 0x01:
                    if deviations.contains(.confirmsUnaligned) { return nil }
                    command = .confirmAlignment
                case 0x02: command = .startScan
                case 0x03:
                    if deviations.contains(.ignoresAbortWhenComplete), simulation.scanStatus.state == .complete { return nil }
                    command = .abort
                case 0x04: command = .reset
                default: return .valueNotAllowed
                }
            default:
                return ATTRefusal(ATTErrorCode.writeNotPermitted)
            }
            let (refusal, said) = simulation.handle(command, at: now)
            outputs += said
            guard let refusal else { return nil }
            if deviations.contains(.wrongErrorCode), case .refused(_, .notInitialized) = refusal { return ATTRefusal(0x80) }
            return Self.attRefusal(refusal)
        }

        mutating func clientConfigurationChanged(valueHandle: UInt16, to value: UInt16) {}

        /// The profile's codes for the simulation's refusals.
        static func attRefusal(_ error: ScaleError) -> ATTRefusal {
            guard case .refused(_, let refusal) = error else { return .unlikely }
            switch refusal {
            case .notAligned: return ATTRefusal(0x80)
            case .notInitialized: return ATTRefusal(0x81)
            case .notReady: return ATTRefusal(0x82)
            case .attError(let code): return ATTRefusal(code)
            }
        }
    }
}
