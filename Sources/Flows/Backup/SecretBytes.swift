import CCrypto
import Synchronization

/// Bytes that must not outlive their use: a password, a derived key, a decrypted vault.
///
/// A `[UInt8]` is the wrong home for a secret. It is copy-on-write, so wiping "it" may wipe a
/// fresh copy while the original stays in the buffer someone else still holds; growing it moves
/// it and frees the old buffer unwiped; and a loop storing zeros before a free is a dead store the
/// optimiser may drop. This is one fixed buffer behind a reference: passing it around never copies
/// the bytes, ``wipe()`` wipes the only copy, and the last reference wipes it on its way out, all
/// with `OPENSSL_cleanse`, which the optimiser cannot remove.
///
/// Its description never shows the bytes, so a secret interpolated into a log line, a JSON
/// report or `-v` output by mistake prints as `SecretBytes(32 bytes)`.
public final class SecretBytes: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Only ever touched under the mutex, and the buffer belongs to this object alone.
    private struct Storage: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        var count: Int
    }

    private let storage: Mutex<Storage>

    /// Room for `capacity` bytes, none of them used yet (a field being typed, a file being read).
    package init(capacity: Int) {
        let capacity = max(0, capacity)
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(1, capacity), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, capacity))
        storage = Mutex(Storage(base: base, capacity: capacity, count: 0))
    }

    /// A secret made from bytes the caller holds (the caller wipes its own copy).
    package convenience init(copying bytes: some Collection<UInt8>) {
        self.init(capacity: bytes.count)
        for byte in bytes { _ = append(byte) }
    }

    /// Up to `capacity` bytes written in place by `body`, which returns how many it wrote: the
    /// secret is never anywhere else (a decryption writes straight into it).
    package convenience init<E: Error>(capacity: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) {
        self.init(capacity: capacity)
        let used = try storage.withLock { s throws(E) -> Int in
            try body(UnsafeMutableRawBufferPointer(start: s.base, count: s.capacity))
        }
        storage.withLock { s in s.count = min(max(0, used), s.capacity) }
    }

    deinit {
        storage.withLock { s in
            Secrets.wipe(UnsafeMutableRawBufferPointer(start: s.base, count: max(1, s.capacity)))
            s.base.deallocate()
        }
    }

    /// How many bytes are in use (not the capacity); safe to log.
    public var count: Int { storage.withLock { $0.count } }
    /// True when nothing has been typed or read in yet, or after a wipe.
    public var isEmpty: Bool { count == 0 }
    /// Every byte has been wiped (or none was ever there).
    package var isWiped: Bool {
        storage.withLock { s in s.count == 0 && UnsafeRawBufferPointer(start: s.base, count: s.capacity).allSatisfy { $0 == 0 } }
    }

    /// The bytes, for as long as `body` runs (no one can wipe them meanwhile). Do not keep them.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withLock { s throws(E) -> R in try body(UnsafeRawBufferPointer(start: s.base, count: s.count)) }
    }

    /// Adds a byte; false (and nothing added) when full: a secret never moves to a bigger buffer.
    @discardableResult
    public func append(_ byte: UInt8) -> Bool {
        storage.withLock { s in
            guard s.count < s.capacity else { return false }
            s.base.storeBytes(of: byte, toByteOffset: s.count, as: UInt8.self)
            s.count += 1
            return true
        }
    }

    /// Adds bytes; false (and nothing added) when they do not all fit.
    @discardableResult
    public func append(contentsOf bytes: some Collection<UInt8>) -> Bool {
        storage.withLock { s in
            guard bytes.count <= s.capacity - s.count else { return false }
            for byte in bytes {
                s.base.storeBytes(of: byte, toByteOffset: s.count, as: UInt8.self)
                s.count += 1
            }
            return true
        }
    }

    /// Lets `body` write up to `limit` more bytes straight into the free room (a read(2), say)
    /// and keeps as many as it says it wrote.
    @discardableResult
    package func appendInPlace<E: Error>(upTo limit: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) -> Int {
        try storage.withLock { s throws(E) -> Int in
            let room = min(max(0, limit), s.capacity - s.count)
            let written = try body(UnsafeMutableRawBufferPointer(start: s.base + s.count, count: room))
            let kept = min(max(0, written), room)
            s.count += kept
            return kept
        }
    }

    /// Removes the last `n` bytes, wiping them.
    package func removeLast(_ n: Int = 1) {
        storage.withLock { s in
            let n = min(max(0, n), s.count)
            Secrets.wipe(UnsafeMutableRawBufferPointer(start: s.base + (s.count - n), count: n))
            s.count -= n
        }
    }

    /// The last byte, if any (for backing over a UTF-8 character).
    public var last: UInt8? {
        storage.withLock { s in s.count == 0 ? nil : s.base.load(fromByteOffset: s.count - 1, as: UInt8.self) }
    }

    /// Zeros every byte and empties the secret. Idempotent.
    package func wipe() {
        storage.withLock { s in
            Secrets.wipe(UnsafeMutableRawBufferPointer(start: s.base, count: s.capacity))
            s.count = 0
        }
    }

    /// Constant time in the length: the bytes are not compared one by one with early exit.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        if lhs === rhs { return true }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                left.count == right.count && (left.isEmpty || CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0)
            }
        }
    }

    /// The length only: a hash of the content would be one more place a secret leaves a trace.
    public func hash(into hasher: inout Hasher) { hasher.combine(count) }

    /// Shows the length only, never the bytes, so a secret logged by mistake leaks nothing.
    public var description: String { "SecretBytes(\(count) bytes)" }
    /// The same as `description`: the debugger and `dump` see no bytes either.
    public var debugDescription: String { description }
}

/// One way to wipe memory that held a secret.
package enum Secrets {
    /// `OPENSSL_cleanse`: zeros that stay written, however the optimiser sees the buffer's future.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        OPENSSL_cleanse(base, buffer.count)
    }

    /// Wipes an array's bytes where they are. Only for arrays nothing else shares (a local
    /// buffer), since a shared one would be copied first and the copy wiped.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }
}
