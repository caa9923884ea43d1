import BLEProtocol
import HAL
import Synchronization

/// Sees every HCI packet the host sends and receives (`HCIHost`'s tap), whole and in order.
/// Called synchronously from inside the host actor: it must return quickly and never call back.
public protocol HCIPacketTap: Sendable {
    /// Takes one packet as it crosses the host; `sentByHost` is false for what the controller sent.
    func record(_ packet: HCIPacket, sentByHost: Bool)
    /// The host resolved `address`, a resolvable private address just reported, to `identity`
    /// with an IRK it holds: what the packets alone do not say.
    func resolved(_ address: BLEAddress, to identity: BLEAddress)
}

extension HCIPacketTap {
    /// A tap that keeps only packets ignores resolutions.
    public func resolved(_ address: BLEAddress, to identity: BLEAddress) {}
}

/// `--record FILE` for Bluetooth: the host's packet tap feeding a `CassetteRecording` on the
/// injected clock (the bench's for `sim:`), so every BLE command records the same way without
/// knowing it does. The cassette is written once, at the end, as a private file (0600, never
/// through a symbolic link, published whole or not at all).
public final class CassetteRecorder: HCIPacketTap {
    private let timebase: Timebase
    private let state = Mutex(CassetteRecording())

    /// Time zero is now on `clock`.
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        timebase = Timebase(clock)
    }

    /// Takes one packet from the host's tap, timed on the recorder's clock.
    public func record(_ packet: HCIPacket, sentByHost: Bool) {
        let now = timebase.now
        state.withLock { $0.record(packet, sentByHost: sentByHost, at: now) }
    }

    /// Keeps the identity beside the private address the device is recorded under.
    public func resolved(_ address: BLEAddress, to identity: BLEAddress) {
        state.withLock { $0.resolved(address, to: identity) }
    }

    /// A session recorded from the device's side (`serve`), whose host is no central.
    private let adopted = Mutex<BLECassette?>(nil)

    /// What has been recorded so far (or what was adopted).
    public var cassette: BLECassette { adopted.withLock { $0 } ?? state.withLock { $0.cassette } }

    /// Takes a cassette made elsewhere as this recording's BLE part: `serve --record` writes what
    /// the central asked and what the served device answered, from the device's side.
    package func adopt(_ cassette: BLECassette) {
        adopted.withLock { $0 = cassette }
    }
    /// Records past a limit that were not kept.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// The cassette's text, with a note of anything a limit kept out; `anonymized` for
    /// `--anonymize` (see `CassetteAnonymizer`).
    public func text(anonymized: Bool = false) -> String {
        let (recorded, dropped) = state.withLock { ($0.cassette, $0.dropped) }
        let cassette = adopted.withLock { $0 } ?? recorded
        var text = CassetteFormat.text(of: anonymized ? CassetteAnonymizer.anonymize(cassette) : cassette)
        if anonymized { text += "# anonymized: addresses, names and serial numbers replaced\n" }
        if dropped > 0 { text += "# \(dropped) records were past the cassette's limits and were not kept\n" }
        return text
    }
}
