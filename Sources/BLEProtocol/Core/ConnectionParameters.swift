/// Connection parameters a peripheral asks for, checked against the ranges the Core
/// specification allows (Vol 6 Part B §4.5.1 and the LE Connection Update command, Vol 4 Part E
/// §7.8.18): interval 7.5 ms–4 s, latency 0–499 events, supervision timeout 100 ms–32 s and
/// longer than (1 + latency) × interval × 2, so the link cannot time out between the events the
/// peripheral may skip. BlueZ refuses what falls outside them too (hci_check_conn_params).
@_spi(Fuzzing) public struct ConnectionParameters: Hashable, Sendable {
    /// In units of 1.25 ms.
    public var minInterval: UInt16
    /// In units of 1.25 ms; at least `minInterval`.
    public var maxInterval: UInt16
    /// Connection events the peripheral may skip.
    public var latency: UInt16
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16

    /// Builds the parameters as received, unchecked; ask `problem` before accepting them.
    public init(minInterval: UInt16, maxInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// Connection interval limits in 1.25 ms units: 7.5 ms to 4 s.
    public static let intervalRange: ClosedRange<UInt16> = 0x0006...0x0C80
    /// Peripheral latency limits in connection events: 0 to 499.
    public static let latencyRange: ClosedRange<UInt16> = 0...0x01F3
    /// Supervision timeout limits in 10 ms units: 100 ms to 32 s.
    public static let timeoutRange: ClosedRange<UInt16> = 0x000A...0x0C80

    /// Why these parameters are refused, or nil when they are acceptable.
    public var problem: String? {
        guard Self.intervalRange.contains(minInterval), Self.intervalRange.contains(maxInterval) else {
            return "interval \(minInterval)–\(maxInterval) × 1.25 ms outside 7.5 ms–4 s"
        }
        guard minInterval <= maxInterval else { return "interval minimum \(minInterval) above its maximum \(maxInterval)" }
        guard Self.latencyRange.contains(latency) else { return "latency \(latency) above 499" }
        guard Self.timeoutRange.contains(supervisionTimeout) else { return "supervision timeout \(supervisionTimeout) × 10 ms outside 100 ms–32 s" }
        // timeout (10 ms units) × 10 > (1 + latency) × maxInterval (1.25 ms units) × 1.25 × 2, in 0.25 ms units:
        let timeoutQuarters = Int(supervisionTimeout) * 40
        let neededQuarters = (1 + Int(latency)) * Int(maxInterval) * 5 * 2
        guard timeoutQuarters > neededQuarters else {
            return "supervision timeout \(Int(supervisionTimeout) * 10) ms not above (1 + \(latency)) × \(Double(maxInterval) * 1.25) ms × 2"
        }
        return nil
    }

    /// The reason code the LE Remote Connection Parameter Request Negative Reply carries.
    public static let unacceptable: UInt8 = 0x3B
}
