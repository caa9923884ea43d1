/// scrypt cost parameters as stored in a VB1 header: N = 2^logN, block size r, parallelism p.
public struct ScryptParameters: Hashable, Sendable, CustomStringConvertible {
    /// log2 of the scrypt cost N; the main lever on both time and memory.
    public var logN: UInt8
    /// scrypt block size; memory grows linearly with it.
    public var r: UInt8
    /// scrypt parallelism; multiplies time, not memory.
    public var p: UInt8

    /// Takes the values as given; check `unsupportedReason` before deriving with them.
    public init(logN: UInt8, r: UInt8, p: UInt8) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// What exporters write by default: logN 17, r 8, p 1 (128 MiB of scrypt memory).
    public static let exportDefault = ScryptParameters(logN: 17, r: 8, p: 1)

    /// Readers accept these ranges and nothing outside them.
    public static let supportedLogN: ClosedRange<UInt8> = 10...22
    /// Accepted block sizes r.
    public static let supportedR: ClosedRange<UInt8> = 1...32
    /// Accepted parallelism p.
    public static let supportedP: ClosedRange<UInt8> = 1...16
    /// The most scrypt memory (128 · r · N bytes) a reader is willing to use: 1 GiB.
    public static let memoryLimit: UInt64 = 1 << 30

    /// 128 · r · N, the size of scrypt's large table. Cannot overflow for any byte values.
    public var memoryBytes: UInt64 {
        let n: UInt64 = logN < 64 ? UInt64(1) << UInt64(logN) : 0
        let (product, overflow) = (128 * UInt64(r)).multipliedReportingOverflow(by: n)
        return overflow || logN >= 64 ? .max : product
    }

    /// Why a reader must refuse these parameters, or nil when they are fine. Pure arithmetic:
    /// nothing is allocated or derived, so it is safe on hostile input.
    public var unsupportedReason: String? {
        guard Self.supportedLogN.contains(logN) else {
            return "logN \(logN) is outside \(Self.supportedLogN.lowerBound)...\(Self.supportedLogN.upperBound)"
        }
        guard Self.supportedR.contains(r) else {
            return "r \(r) is outside \(Self.supportedR.lowerBound)...\(Self.supportedR.upperBound)"
        }
        guard Self.supportedP.contains(p) else {
            return "p \(p) is outside \(Self.supportedP.lowerBound)...\(Self.supportedP.upperBound)"
        }
        guard memoryBytes <= Self.memoryLimit else {
            return "logN \(logN) with r \(r) needs \(memoryBytes >> 20) MiB of memory, more than 1 GiB"
        }
        // RFC 7914 requires N < 2^(16·r); OpenSSL enforces it, so only r = 1 with logN ≥ 16 is affected.
        guard UInt64(16) * UInt64(r) >= 64 || UInt64(logN) < UInt64(16) * UInt64(r) else {
            return "logN \(logN) is too large for r \(r) (scrypt needs N < 2^(16·r))"
        }
        return nil
    }

    /// The three values in one line, e.g. for logs and test failures.
    public var description: String { "scrypt logN \(logN) r \(r) p \(p)" }
}
