import Flows
import Synchronization
import TestKit

/// The test vector from the VB1 spec, and small helpers shared by the backup tests.
enum VB1Vector {
    static let password = "correct horse battery staple"
    static let salt: [UInt8] = Array(0x00...0x0F)
    static let nonce: [UInt8] = Array(0x64...0x6F)
    static let parameters = ScryptParameters(logN: 10, r: 8, p: 1)
    static let plaintext = Array(#"{"items":[{"issuer":"Example","account":"alice@example.com","secret":"JBSWY3DPEHPK3PXP","digits":6,"period":30}]}"#.utf8)
    static let containerHex =
        "564c544201010a0801000102030405060708090a0b0c0d0e0f6465666768696a6b6c6d6e6fc5ddad332503921367"
        + "668e5238c69a3f75cfc69e4f82cc4c27de3a38f53b87cb82dc2296a832999ffb187cefaf78ce0b9054bae1ae0bfef0"
        + "5dda29a90f51653bb4ab5cc9e876dad243d4d03d97257507f87c0243dc456edd37579c90929bf787b8702bb0dfe226"
        + "b2a484f81c30decb800671b2ea3e568968b0ced9feaf92ad4380c46bc44ac4425e6f"
    static let container: [UInt8] = bytes(hex: containerHex)
    static let id = "32966C6C"
    static let codes = [
        "VB1:32966C6C:1/3:.+AFTAW503C1V50X507H0QS00+0J61%H1CT1P.1% CC3DVED5QDO$D%5E41S/K6EK0HK2J/CXHA$4P0180CQR0K",
        "VB1:32966C6C:2/3:4OGAS9A4S197TN7XWPE$R32J%H65AKD43ODUBCFZK10WA*NSAN1IHU4QRYGL2DATO7%TLSNP61F7QQU+QHZ74X4",
        "VB1:32966C6C:3/3:F01LUF2Q8:Y8L/RI3BKCICWJ47H58E9GMOQSCQMK GGP3K7SE8G GEQRTD.APADX6Q*8WJOI0O8I$OU OM OA.B",
    ]
}

func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8).map { byte -> UInt8 in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: fatalError("not hex: \(hex)")
        }
    }
    precondition(digits.count % 2 == 0)
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let text = String(byte, radix: 16)
        return byte < 16 ? "0" + text : text
    }.joined()
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
