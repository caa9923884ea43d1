import BLEProtocol
import HAL
import Transports

/// A device on the radio — the virtual controller's, or a real one's through `PeripheralHost`: what it advertises, and how it behaves once a central connects.
///
/// Peripherals are values the controller owns and feeds (sans-IO): it tells them when the link
/// comes up or goes down, hands them each L2CAP frame the central sends, and asks them to run
/// whatever they scheduled once time reaches `nextDeadline`. They answer with `PeripheralAction`s.
/// Times are durations on the controller's `Timebase`, so a manual clock drives them exactly.
package protocol VirtualPeripheral: Sendable {
    var address: BLEAddress { get }
    /// How and how often it advertises, and with what.
    var advertising: VirtualAdvertising { get }
    /// Whether it advertises now (most stop while a central is connected).
    var isAdvertising: Bool { get }
    /// Whether it goes on advertising with a central connected (see the extension's default).
    var advertisesWhileConnected: Bool { get }

    /// A central connected.
    mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction]
    /// One whole L2CAP frame from the central.
    mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction]
    /// Something happened to the link the peripheral takes part in (new parameters, a refusal).
    mutating func linkChanged(_ change: VirtualLinkChange, at now: Duration) -> [PeripheralAction]
    /// The link ended, with the reason the peripheral's own controller would report.
    mutating func linkDown(reason: UInt8, at now: Duration)
    /// The link's security changed (pairing, encryption): attributes that need it are served
    /// from now on. Nothing pairs yet; the default ignores it.
    mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction]
    /// The central started encryption (LE Enable Encryption) naming the key by EDIV and Rand: the
    /// key the peripheral's side would give its controller (the LTK Request, Core Vol 6 Part B
    /// §5.1.3). The default has none, so the link stays unencrypted (0x06 PIN or Key Missing).
    mutating func encryptionRequested(ediv: UInt16, rand: UInt64, at now: Duration) -> VirtualEncryptionKey
    /// The link is encrypted now (the peripheral's Encryption Change): what it sends then, such
    /// as a pairing's key distribution.
    mutating func encrypted(at now: Duration) -> [PeripheralAction]
    /// Its GATT database, when it has one laid out (a replay answers as recorded instead), so
    /// whoever shows what a central does can name handles (a CCCD, a characteristic's UUID).
    var attributeDatabase: AttributeDatabase? { get }

    /// When it next wants `advance(to:)`, if ever.
    var nextDeadline: Duration? { get }
    mutating func advance(to now: Duration) -> [PeripheralAction]

    /// For peripherals that stream: up to `room` frames to send now. The controller asks when the
    /// host has read enough that more can go, which is how a fast peripheral is held back by a slow
    /// host (the air's own flow control), instead of filling memory.
    mutating func framesToSend(room: Int, at now: Duration) -> [L2CAPFrame]
}

extension VirtualPeripheral {
    /// Whether it goes on advertising with a central connected (no profile's peripheral does;
    /// a deviating mirror can, to show a check catching it).
    package var advertisesWhileConnected: Bool { false }
    package mutating func linkChanged(_ change: VirtualLinkChange, at now: Duration) -> [PeripheralAction] { [] }
    package mutating func framesToSend(room: Int, at now: Duration) -> [L2CAPFrame] { [] }
    package mutating func securityChanged(_ level: SecurityLevel, at now: Duration) -> [PeripheralAction] { [] }
    package mutating func encryptionRequested(ediv: UInt16, rand: UInt64, at now: Duration) -> VirtualEncryptionKey { .none }
    package mutating func encrypted(at now: Duration) -> [PeripheralAction] { [] }
    package var attributeDatabase: AttributeDatabase? { nil }
}

/// A key that acts on a simulated device while it is served (`hwprobe serve`'s screen).
package struct PeripheralControl: Hashable, Sendable {
    /// The key a person presses.
    package var key: Character
    /// How the screen names the key (or keys: "1–6").
    package var keys: String
    /// What it does, for the screen's key line ("step on/off").
    package var label: String

    package init(key: Character, keys: String? = nil, label: String) {
        self.key = key
        self.keys = keys ?? String(key)
        self.label = label
    }
}

/// A simulated device a person can act on while a central uses it: the mirror's person and
/// scale, a scale's weight. Replays and profiles have nothing to act on.
package protocol ControllablePeripheral: VirtualPeripheral {
    /// The keys, in the order the screen lists them.
    var controls: [PeripheralControl] { get }
    /// The device's state in a few words, for the screen ("ready · scale occupied 72.4 kg").
    var stateSummary: String { get }
    /// A key was pressed: what the device does about it.
    mutating func perform(_ key: Character, at now: Duration) -> [PeripheralAction]
}

/// A virtual peripheral's answer when the central starts encryption.
package enum VirtualEncryptionKey: Hashable, Sendable {
    /// No key: the controller refuses with 0x06 PIN or Key Missing.
    case none
    /// This key; the link is encrypted only when the central used the same one (otherwise the
    /// first packet fails its MIC and the link ends with 0x3D, Vol 6 Part B §5.1.3.1).
    case key(SecurityKey)
    /// Whatever key the central gives: a replay, whose recording kept that the link was encrypted
    /// but never the key, simulates the encrypted link.
    case simulated
}

/// What a peripheral asks of its side of the radio.
package enum PeripheralAction: Hashable, Sendable {
    /// An L2CAP frame to the central.
    case send(L2CAPFrame)
    /// End the link now with this reason (0x13 remote user terminated, 0x08 for a link that is
    /// to look lost to supervision, 0x15 power off…): the central's controller reports it at once.
    case disconnect(reason: UInt8)
    /// Go quiet on the radio: the central's controller notices only when the link's supervision
    /// timeout has passed, and then reports 0x08 Connection Timeout.
    case vanish
    /// The link layer's Connection Parameters Request procedure (intervals in 1.25 ms units,
    /// timeout in 10 ms units): the central's host is asked through the LE Remote Connection
    /// Parameter Request event.
    case requestParameters(minInterval: UInt16, maxInterval: UInt16, latency: UInt16, timeout: UInt16)
}

/// The link as the peripheral sees it when it comes up.
package struct VirtualLinkParameters: Hashable, Sendable {
    package var central: BLEAddress
    /// 1.25 ms units.
    package var interval: UInt16
    package var latency: UInt16
    /// 10 ms units.
    package var supervisionTimeout: UInt16

    package init(central: BLEAddress, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.central = central
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

package enum VirtualLinkChange: Hashable, Sendable {
    case parametersUpdated(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16)
    /// The central's host refused a parameter request, with its reason (usually 0x3B).
    case parameterRequestRefused(reason: UInt8)
}

/// How a peripheral advertises. Advertising events happen at `firstEvent + k × interval` on the
/// controller's timeline, whether or not anyone listens (as on a real radio).
package struct VirtualAdvertising: Hashable, Sendable {
    package enum Form: Hashable, Sendable {
        /// ADV_IND with up to 31 bytes, answering scan requests with a SCAN_RSP of up to 31.
        /// Legacy and extended scanners both see it.
        case legacy(advertisingData: [UInt8], scanResponse: [UInt8])
        /// One connectable, non-scannable extended advertisement (ADV_EXT_IND + AUX_ADV_IND) of
        /// up to 1650 bytes. Only a host using the extended scanning commands sees it.
        case extended(data: [UInt8])
    }

    package var form: Form
    /// Whether a central may connect: false makes a broadcaster (ADV_SCAN_IND when there is a
    /// scan response, else ADV_NONCONN_IND; a non-connectable extended advertisement), as a
    /// replayed cassette of a broadcasting scale needs.
    package var connectable = true
    package var interval: Duration
    package var firstEvent: Duration
    package var rssi: Int8
    package var txPower: Int8

    package init(form: Form, interval: Duration = .milliseconds(100), firstEvent: Duration = .zero, rssi: Int8 = -50,
                txPower: Int8 = 0, connectable: Bool = true) {
        self.form = form
        self.connectable = connectable
        self.interval = max(interval, .milliseconds(20))
        self.firstEvent = firstEvent
        self.rssi = rssi
        self.txPower = txPower
    }

    /// The profile's two forms for one advertisement (docs/mirror-gatt-v1.md): everything in one
    /// extended advertisement, or, for legacy, flags and service UUIDs in ADV_IND and the rest
    /// (manufacturer data, service data, name) in the scan response.
    package static func form(for advertisement: Advertisement, extended: Bool) -> Form {
        if extended { return .extended(data: AdvertisingData.encode(advertisement)) }
        var primary = Advertisement(flags: advertisement.flags, serviceUUIDs: advertisement.serviceUUIDs)
        primary.nameIsComplete = advertisement.nameIsComplete
        var secondary = advertisement
        secondary.flags = nil
        secondary.serviceUUIDs = []
        let whole = AdvertisingData.encode(advertisement)
        // What fits in 31 bytes goes out whole; a scan response is only for what does not.
        if whole.count <= 31 { return .legacy(advertisingData: whole, scanResponse: []) }
        return .legacy(advertisingData: AdvertisingData.encode(primary), scanResponse: AdvertisingData.encode(secondary))
    }
}

/// `72.35 kg`: a weight as the serve screen shows it, to the hundredth.
package func kilogramsText(_ kilograms: Double) -> String {
    guard kilograms.isFinite else { return "? kg" }
    let hundredths = Int((abs(kilograms) * 100).rounded())
    let fraction = hundredths % 100
    return (kilograms < 0 ? "-" : "") + "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction) kg"
}
