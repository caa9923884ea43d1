import Flows
import Synchronization
import TestKit

/// The spec's scrypt parameters as the flows take them (TestKit's `VB1Vector` holds the rest).
extension VB1Vector {
    static let parameters = ScryptParameters(logN: logN, r: r, p: p)
}

/// All orderings of a small array.
func permutations<T>(_ items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result: [[T]] = []
    for (index, item) in items.enumerated() {
        var rest = items
        rest.remove(at: index)
        for tail in permutations(rest) {
            result.append([item] + tail)
        }
    }
    return result
}

/// A deriver that counts its calls and hands the work to the real one (or fails if told to).
final class CountingDeriver: KeyDeriver {
    private let calls = Mutex(0)
    private let real = ScryptKeyDeriver()

    var callCount: Int { calls.withLock { $0 } }

    func deriveKey(password: SecretBytes, salt: [UInt8], parameters: ScryptParameters) throws -> [UInt8] {
        calls.withLock { $0 += 1 }
        return try real.deriveKey(password: password, salt: salt, parameters: parameters)
    }
}


/// Writes a container from a hand-made header and arbitrary tail, for parser tests.
func craftedContainer(logN: UInt8, r: UInt8, p: UInt8, magic: [UInt8] = Array("VLTB".utf8),
                      version: UInt8 = 1, kdf: UInt8 = 1, tailLength: Int = 16) -> [UInt8] {
    magic + [version, kdf, logN, r, p] + VB1Vector.salt + VB1Vector.nonce
        + [UInt8](repeating: 0xAA, count: 8) + [UInt8](repeating: 0x55, count: tailLength)
}

extension SecretBytes {
    /// A copy of the bytes, for a test to compare what came out (production code never copies
    /// a secret out of its buffer like this).
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    static func == (lhs: SecretBytes, rhs: [UInt8]) -> Bool { lhs.bytes == rhs }
}
