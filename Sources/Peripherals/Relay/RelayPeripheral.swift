import BLEProtocol
import HAL
import Transports

/// What the relay's app side asks of the device it stands for (`hwprobe relay`): the runner
/// carries each out on the device's link and feeds the outcome back as a `RelayDeviceInput`.
package enum RelayForward: Hashable, Sendable {
    /// An app connected: connect to the device now (it meets a new central when the app does,
    /// so a device whose session starts with the connection starts it for the app).
    case connectDevice
    /// An ATT request from the app, as it sent it; its answer comes back as `.answered`.
    case request([UInt8])
    /// A Write Command (or Signed Write Command): no answer.
    case command([UInt8])
    /// The app offered this receive MTU: the device's link is to exchange MTUs with that offer,
    /// and its outcome comes back as `.mtu`, so both links end with the same ATT_MTU.
    case exchangeMTU(UInt16)
    /// The app left: the device's link is to end too.
    case endDeviceLink
}

/// What happened on the device's link, fed to `RelayPeripheral` in the order it happened.
package enum RelayDeviceInput: Hashable, Sendable {
    /// The device's link is up, after `.connectDevice`.
    case connected
    /// The device's answer to the request last forwarded (its response or Error Response PDU).
    case answered([UInt8])
    /// The ATT_MTU the device's link took after `.exchangeMTU`.
    case mtu(UInt16)
    case notified(handle: UInt16, value: [UInt8])
    /// Already confirmed to the device by our client bearer; the app confirms it to the relay.
    case indicated(handle: UInt16, value: [UInt8])
    /// The device's link ended, or could not be made, with the HCI reason.
    case disconnected(reason: UInt8)
}

/// A peripheral that stands for another device and passes what it is asked on to it, so
/// `PeripheralHost` can run it like any other: after each step the host hands what it wants
/// forwarded to the runner, and feeds back what the device said through `device(_:at:)`.
package protocol RelayingPeripheral: VirtualPeripheral {
    /// What is to be forwarded since the last call, in order.
    mutating func takeForwards() -> [RelayForward]
    /// The device said or did something: what goes to the app.
    mutating func device(_ input: RelayDeviceInput, at now: Duration) -> [PeripheralAction]
}

/// The app's side of `hwprobe relay`, sans-IO: a peripheral with the device's address and
/// advertising whose ATT server is the device itself. Every ATT request the app sends becomes
/// a `RelayForward.request` with the same bytes, so the device's own handles, values, CCCDs and
/// errors reach the app unchanged (nothing is copied that could drift from the device); its
/// answers, notifications and indications are sent to the app as the device sent them.
///
/// The device's link follows the app's: an app connecting makes the relay connect to the
/// device (requests that come meanwhile wait their turn on the way there), and either link
/// ending ends the other. What stays per side: the MTU (the app's Exchange MTU is forwarded as the device link's own
/// exchange, and the app is answered with what the device link took, so both links carry the
/// same ATT_MTU; anything longer than the app's ATT_MTU is cut the way a server cuts it, Core
/// Vol 3 Part F §3.4), indication confirmations (the device's are sent by our client bearer at
/// once; the app's are waited for here, one indication at a time, within the 30 s ATT
/// transaction timeout, §3.3.3), and the link itself: when the device's link ends the app's is
/// ended, and when the app leaves the device's link is asked to end. It advertises while no app
/// is connected and the device's last link has ended.
package struct RelayPeripheral: RelayingPeripheral {
    /// How long the app has to confirm an indication (the ATT transaction timeout).
    package static let confirmationTimeout: Duration = .seconds(30)

    private enum DeviceLink {
        /// No link, none wanted: the relay advertises.
        case idle
        /// Asked for (`.connectDevice`), or up.
        case connecting, up
        /// Asked to end (the app left), or lost while the app is still on.
        case ending
    }

    package let address: BLEAddress
    package let advertising: VirtualAdvertising
    private var deviceLink: DeviceLink
    private var appConnected = false
    /// The app's ATT_MTU, 23 until an exchange.
    package private(set) var appMTU: UInt16 = ATTMTU.minimum
    /// Indications waiting for the app to confirm the one before.
    private var indications: [[UInt8]] = []
    /// When the indication sent to the app must have been confirmed.
    private var confirmationDue: Duration?
    private var forwards: [RelayForward] = []

    /// `address` and `advertising` are the device's.
    package init(address: BLEAddress, advertising: VirtualAdvertising) {
        self.address = address
        self.advertising = advertising
        deviceLink = .idle
    }

    package var isAdvertising: Bool { deviceLink == .idle && !appConnected }
    package var nextDeadline: Duration? { confirmationDue }

    package mutating func takeForwards() -> [RelayForward] {
        defer { forwards = [] }
        return forwards
    }

    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] {
        appConnected = true
        appMTU = ATTMTU.minimum
        indications = []
        confirmationDue = nil
        // An app that connected while the device's last link was still ending finds nothing behind the relay.
        guard deviceLink == .idle else { return [.disconnect(reason: 0x13)] }
        deviceLink = .connecting
        forwards.append(.connectDevice)
        return []
    }

    package mutating func linkDown(reason: UInt8, at now: Duration) {
        appConnected = false
        indications = []
        confirmationDue = nil
        if deviceLink == .up || deviceLink == .connecting {
            deviceLink = .ending
            forwards.append(.endDeviceLink)
        }
    }

    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] {
        switch PeripheralChannels.route(frame) {
        case .att(let pdu): return fromApp(pdu, at: now)
        case .reply(let frame): return [.send(frame)]
        case .parameterUpdateAnswered, .nothing: return []
        }
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        guard let due = confirmationDue, due <= now else { return [] }
        // The app let an indication's transaction time out: its bearer is done (§3.3.3).
        confirmationDue = nil
        indications = []
        return appConnected ? [.disconnect(reason: 0x13)] : []
    }

    package mutating func device(_ input: RelayDeviceInput, at now: Duration) -> [PeripheralAction] {
        switch input {
        case .connected:
            guard deviceLink == .connecting else { return [] }
            deviceLink = .up
            return []
        case .disconnected(let reason):
            deviceLink = .idle
            indications = []
            confirmationDue = nil
            // The device's reason goes to the app where the Disconnect command takes it.
            return appConnected ? [.disconnect(reason: reason)] : []
        case .answered(let pdu):
            guard appConnected else { return [] }
            return [PeripheralChannels.att(Self.fit(pdu, mtu: appMTU))]
        case .mtu(let mtu):
            guard appConnected else { return [] }
            appMTU = max(ATTMTU.minimum, mtu)
            return [PeripheralChannels.att(ATTPDU.exchangeMTUResponse(appMTU).encoded)]
        case .notified(let handle, let value):
            guard appConnected else { return [] }
            return [PeripheralChannels.att(ATTPDU.handleValueNotification(handle: handle, value: fitted(value)).encoded)]
        case .indicated(let handle, let value):
            guard appConnected else { return [] }
            let pdu = ATTPDU.handleValueIndication(handle: handle, value: fitted(value)).encoded
            guard confirmationDue == nil else {
                indications.append(pdu)
                return []
            }
            confirmationDue = now + Self.confirmationTimeout
            return [PeripheralChannels.att(pdu)]
        }
    }

    // MARK: the app's ATT

    private mutating func fromApp(_ pdu: [UInt8], at now: Duration) -> [PeripheralAction] {
        guard let opcode = pdu.first else { return [] }
        switch opcode {
        case ATTPDU.Opcode.exchangeMTURequest:
            guard pdu.count == 3 else { return [Self.invalid(opcode)] }
            guard deviceLink == .up || deviceLink == .connecting else { return [] }
            forwards.append(.exchangeMTU(max(ATTMTU.minimum, UInt16(pdu[1]) | UInt16(pdu[2]) << 8)))
            return []
        case ATTPDU.Opcode.handleValueConfirmation:
            guard confirmationDue != nil else { return [] }
            confirmationDue = nil
            guard !indications.isEmpty else { return [] }
            confirmationDue = now + Self.confirmationTimeout
            return [PeripheralChannels.att(indications.removeFirst())]
        case ATTPDU.Opcode.writeCommand, 0xD2:
            if deviceLink == .up || deviceLink == .connecting { forwards.append(.command(pdu)) }
            return []
        default:
            guard ATTPDU.responseOpcode(forRequest: opcode) != nil else { return [] } // nothing the relay asked for
            guard deviceLink == .up || deviceLink == .connecting else {
                // Between the device's end and the app's: nothing can answer (0x0E Unlikely Error).
                let handle = pdu.count >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
                return [PeripheralChannels.att(ATTPDU.errorResponse(requestOpcode: opcode, handle: handle, code: 0x0E).encoded)]
            }
            forwards.append(.request(pdu))
            return []
        }
    }

    private static func invalid(_ opcode: UInt8) -> PeripheralAction {
        PeripheralChannels.att(ATTPDU.errorResponse(requestOpcode: opcode, handle: 0, code: 0x04).encoded)
    }

    /// A value cut to what a notification or indication carries on the app's link (ATT_MTU − 3).
    private func fitted(_ value: [UInt8]) -> [UInt8] {
        Array(value.prefix(Int(appMTU) - 3))
    }

    /// A response cut to `mtu` as a server cuts it (Vol 3 Part F §3.4): a read's value to what
    /// fits, a list of handles or attribute data to its whole entries that fit. Only a device
    /// whose link kept a larger MTU than the app's (it asked for one itself) needs this.
    static func fit(_ pdu: [UInt8], mtu: UInt16) -> [UInt8] {
        let limit = Int(mtu)
        guard pdu.count > limit, let opcode = pdu.first else { return pdu }
        let entry: (header: Int, size: Int)?
        switch opcode {
        case 0x05: entry = pdu.count >= 2 ? (2, pdu[1] == 0x01 ? 4 : 18) : nil // Find Information: format, entries
        case 0x07: entry = (1, 4) // Find By Type Value: handle ranges
        case 0x09, 0x11: entry = pdu.count >= 2 && pdu[1] > 0 ? (2, Int(pdu[1])) : nil // length, entries
        default: entry = nil
        }
        guard let entry else { return Array(pdu.prefix(limit)) }
        let whole = (limit - entry.header) / entry.size
        return Array(pdu.prefix(entry.header + max(1, whole) * entry.size).prefix(limit))
    }
}
