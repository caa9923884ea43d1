import HAL
import Synchronization

/// How long a key derivation takes on *this* machine, so the decrypting screen can say
/// "This can take up to 40 seconds." only when it really can. scrypt's work grows with N·r·p,
/// so one cheap calibration derivation, timed, scales to any parameters.
package struct DerivationTimeEstimate: Sendable, Hashable {
    /// Seconds per unit of N·r·p, measured.
    package let secondsPerUnit: Double

    package init(secondsPerUnit: Double) {
        self.secondsPerUnit = secondsPerUnit
    }

    /// The parameters timed to calibrate: 8 MiB of scrypt memory, a few milliseconds of work.
    package static let calibrationParameters = ScryptParameters(logN: 13, r: 8, p: 1)

    /// Times the calibration derivation (best of three, to skip a cold cache or a busy moment).
    package static func measure(with deriver: any KeyDeriver = ScryptKeyDeriver()) -> DerivationTimeEstimate? {
        let clock = ContinuousClock()
        var best: Duration?
        for _ in 0..<3 {
            let start = clock.now
            guard (try? deriver.deriveKey(password: SecretBytes(copying: "calibration".utf8), salt: Array(repeating: 0, count: 16),
                                          parameters: calibrationParameters)) != nil else { return nil }
            let elapsed = start.duration(to: clock.now)
            best = min(best ?? elapsed, elapsed)
        }
        guard let best else { return nil }
        return DerivationTimeEstimate(secondsPerUnit: best.inSeconds / calibrationParameters.work)
    }

    private static let cache = Mutex<DerivationTimeEstimate?>(nil)

    /// Measured once per process, then reused.
    package static func cached() -> DerivationTimeEstimate? {
        if let known = cache.withLock({ $0 }) { return known }
        let measured = measure()
        cache.withLock { $0 = $0 ?? measured }
        return measured
    }

    /// Expected seconds for these parameters.
    public func seconds(for parameters: ScryptParameters) -> Double {
        secondsPerUnit * parameters.work
    }

    /// When nothing could be measured: a two-core CI machine's speed (logN 20, r 8, p 16 took
    /// 37 s there), so the cost of hostile parameters is still known before it is paid.
    package static let reference = DerivationTimeEstimate(secondsPerUnit: 2.8e-7)

    /// The most a derivation may cost before a person is asked (and an unattended run refuses):
    /// about what the format's worst parameters cost on a fast machine, and far beyond the
    /// default export (logN 17, r 8, p 1: about 0.3 s).
    package static let slowLimit: Duration = .seconds(30)

    /// Whether these parameters cost more than `limit` here.
    package func isSlow(_ parameters: ScryptParameters, limit: Duration = Self.slowLimit) -> Bool {
        seconds(for: parameters) > limit.inSeconds
    }

    /// "about 37 s" / "about 3 min": the estimate as people read it.
    package func spokenEstimate(for parameters: ScryptParameters) -> String {
        let seconds = self.seconds(for: parameters)
        if seconds < 90 { return "about \(max(1, Int(seconds.rounded()))) s" }
        return "about \(Int((seconds / 60).rounded())) min"
    }

    /// The footer line while decrypting. "Up to" carries a margin over the measurement (large
    /// tables miss the cache more, and the machine may be busy), rounded to figures people read.
    package func decryptingLine(for parameters: ScryptParameters) -> String {
        Self.decryptingLine(expectedSeconds: seconds(for: parameters))
    }

    package static func decryptingLine(expectedSeconds: Double) -> String {
        let bound = expectedSeconds * 1.5
        if bound < 3 { return "Decrypting. This takes a moment." }
        if bound < 60 {
            let seconds = min(55, Int((bound / 5).rounded(.up)) * 5)
            return "Decrypting. This can take up to \(seconds) seconds."
        }
        let minutes = Int((bound / 60).rounded(.up))
        return "Decrypting. This can take up to \(minutes) minute\(minutes == 1 ? "" : "s")."
    }
}

extension ScryptParameters {
    /// N·r·p: what scrypt's running time is proportional to.
    var work: Double { Double(UInt64(1) << UInt64(min(logN, 62))) * Double(r) * Double(p) }
}

