import BLEProtocol
import HAL

/// How the host advertises when it plays the peripheral (`HCIHost.advertise(_:)`).
package struct AdvertisingSetup: Hashable, Sendable {
    package enum Form: Hashable, Sendable {
        /// ADV_IND (or ADV_SCAN_IND / ADV_NONCONN_IND) with up to 31 bytes, and a scan response
        /// of up to 31: what every scanner sees.
        case legacy(advertisingData: [UInt8], scanResponse: [UInt8])
        /// One extended advertisement (ADV_EXT_IND + AUX_ADV_IND) of up to 1650 bytes, not
        /// scannable: everything in one PDU, for scanners that never see scan responses.
        case extended(data: [UInt8])
    }

    package var form: Form
    /// Whether a central may connect (false: a broadcaster).
    package var connectable: Bool
    /// Between advertising events: 20 ms to 10.24 s.
    package var interval: Duration
    /// nil: the controller's public address. Otherwise a static random address, or a
    /// resolvable private one (privacy), set on the controller before advertising starts.
    package var randomAddress: BLEAddress?
    /// With a resolvable private `randomAddress`: the identity address it stands for, the one a
    /// pairing distributes with our IRK. nil: the advertised address is the identity.
    package var identityAddress: BLEAddress?

    package init(form: Form, connectable: Bool = true, interval: Duration = .milliseconds(100), randomAddress: BLEAddress? = nil,
                 identityAddress: BLEAddress? = nil) {
        self.form = form
        self.connectable = connectable
        self.interval = interval
        self.randomAddress = randomAddress
        self.identityAddress = identityAddress
    }

    /// The interval in the controller's 0.625 ms units, within what legacy advertising allows.
    var intervalUnits: UInt32 {
        let milliseconds = interval.wholeMilliseconds
        return UInt32(min(max(milliseconds * 8 / 5, 0x20), 0x4000))
    }
}

/// A link on which our host is the peripheral, as the controller reported it.
package struct PeripheralLinkInfo: Hashable, Sendable {
    package var handle: UInt16
    package var central: BLEAddress
    /// 1.25 ms units.
    package var interval: UInt16
    package var latency: UInt16
    /// 10 ms units.
    package var supervisionTimeout: UInt16

    package init(handle: UInt16, central: BLEAddress, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.handle = handle
        self.central = central
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// What happens on the peripheral side of the host, in the order the controller said it:
/// centrals connecting, every L2CAP frame they send (ATT, signalling, the security manager),
/// new parameters, links ending. The peripheral's own logic answers through the host's
/// `sendL2CAP`, `disconnectPeripheralLink` and `advertise`.
package enum PeripheralEvent: Hashable, Sendable {
    case connected(PeripheralLinkInfo)
    case frame(handle: UInt16, L2CAPFrame)
    case parametersChanged(handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    /// The link ended; `reason` is the HCI code the controller gave.
    case disconnected(handle: UInt16, reason: UInt8)
    /// The link's encryption changed (the ATT server compares it with what attributes need).
    case securityChanged(handle: UInt16, LinkSecurity)
    /// A pairing, or encryption with a bond's key, ended (only when the host pairs: `useSecurity`).
    case secured(handle: UInt16, SecuringOutcome)
    /// Advertising stopped without a connection (the controller's own limit) or was ended by one.
    case advertisingEnded(status: UInt8)
}
