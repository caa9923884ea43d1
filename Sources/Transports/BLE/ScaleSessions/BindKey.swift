import BLEProtocol
import HAL

/// A device's bind key: the 16-byte AES key a Xiaomi device encrypts its MiBeacon advertisements
/// with (issue 29, item 4). Mi Home makes it when the device is bound to an account, so it is
/// the device's, whichever controller hears it, and changes when the device is bound again.
///
/// A secret, kept the way the bond store keeps keys: one buffer behind a reference, so passing
/// the key around never copies its bytes; the last reference wipes them (`OPENSSL_cleanse`) on
/// its way out; and its description shows no byte, so a key interpolated into a message, a JSON
/// object or `-v` output by mistake prints as `BindKey(16 bytes)`. The hex text it was parsed
/// from is the caller's (a command line's argument cannot be wiped).
public final class BindKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked: `storage` is written once, in `init`, and only read after that (and wiped
    // in `deinit`, when no one else holds the key any more).
    private let storage: UnsafeMutableRawBufferPointer

    /// A bind key is 16 bytes: 32 hex digits.
    public static let length = 16

    private init(storage: UnsafeMutableRawBufferPointer) { self.storage = storage }

    deinit {
        KeyMaterial.wipe(storage)
        storage.deallocate()
    }

    /// The key 32 hex digits spell (either case; nothing else in between); nil for any other
    /// text. The digits go straight into the key's own buffer, never into another array.
    public static func parse(hex text: some StringProtocol) -> BindKey? {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        var count = 0
        var high: UInt8?
        for character in text.utf8 {
            guard count < length, let nibble = Hex.nibble(character) else {
                count = length + 1
                break
            }
            if let first = high {
                storage[count] = first << 4 | nibble
                count += 1
                high = nil
            } else {
                high = nibble
            }
        }
        guard count == length, high == nil else {
            KeyMaterial.wipe(storage)
            storage.deallocate()
            return nil
        }
        return BindKey(storage: storage)
    }

    /// The key in `bytes` (exactly 16 of them); nil otherwise. The caller wipes its own copy.
    public static func make(_ bytes: [UInt8]) -> BindKey? {
        guard bytes.count == length else { return nil }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        storage.copyBytes(from: bytes)
        return BindKey(storage: storage)
    }

    /// The 16 bytes, for as long as `body` runs. Do not keep them.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// The key as 32 lower-case hex digits, for the one place that must write it down: the bind
    /// key store's file (which wipes what it wrote). Never for output.
    package var revealedHex: String { Hex.string(UnsafeRawBufferPointer(storage), .lower) }

    /// The same bytes as `other`, compared without stopping at the first difference.
    public func matches(_ other: BindKey) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<Self.length { difference |= storage[index] ^ other.storage[index] }
        return difference == 0
    }

    /// Shows the length only, never the bytes.
    public var description: String { "BindKey(\(Self.length) bytes)" }
    /// The same as `description`: the debugger and `dump` see no bytes either.
    public var debugDescription: String { description }
}
