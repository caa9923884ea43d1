import TestKit
import Foundation
import HAL
import HALFakes
import Testing
@testable import Flows

/// Secrets in memory (issue 15): once the plaintext is written and the key derived, no copy of
/// either may be left anywhere in the process, freed memory included.
@Suite(.serialized) struct SecretWipingTests {
    /// The plaintext the decrypt flow hands over is the only copy: wiping it wipes the flow's
    /// own (it keeps its outcome, so `run()` can be asked again).
    @Test func wipingTheDecryptedPlaintextWipesTheFlowsCopy() async throws {
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: ManualClock(), motion: .reduced)
        flow.submit(password: VB1Vector.password)
        guard case .decrypted(let plaintext) = await flow.run() else {
            Issue.record("not decrypted")
            return
        }
        #expect(plaintext == VB1Vector.plaintext)
        plaintext.wipe()
        guard case .decrypted(let kept) = await flow.run() else {
            Issue.record("not decrypted the second time")
            return
        }
        #expect(kept.isWiped, "the flow still holds the plaintext after the caller wiped its own")
    }

    /// ASCII (and anything below U+0300) is already NFC: the typed bytes are derived from where
    /// they are, with no normalised copy; a decomposed password becomes a new NFC secret.
    @Test func normalisingThePasswordCopiesOnlyWhenItMust() {
        let ascii = SecretBytes(copying: "correct horse".utf8)
        #expect(VB1Container.normalizedPassword(ascii) === ascii)
        let latin = SecretBytes(copying: "s\u{E9}same".utf8)
        #expect(VB1Container.normalizedPassword(latin) === latin)
        let decomposed = SecretBytes(copying: "se\u{301}same".utf8)
        let normalized = VB1Container.normalizedPassword(decomposed)
        #expect(normalized !== decomposed)
        #expect(normalized == Array("s\u{E9}same".utf8))
    }

    /// The derivation reads the password where it is, and the flow wipes it once it has run.
    @Test func theFlowWipesThePasswordOnceDerived() async {
        let flow = BackupDecryptFlow(container: VB1Vector.container, clock: ManualClock(), motion: .reduced)
        let password = SecretBytes(copying: VB1Vector.password.utf8)
        flow.submit(password: password)
        guard case .decrypted(let plaintext) = await flow.run() else {
            Issue.record("not decrypted")
            return
        }
        plaintext.wipe()
        #expect(password.isWiped, "the password outlived its derivation")
    }

    /// A secret's description never shows its bytes (a log line or a report interpolating one).
    @Test func aSecretNeverPrintsItsBytes() {
        let secret = SecretBytes(copying: "hunter2".utf8)
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        #expect("\(secret)" == "SecretBytes(7 bytes)")
    }

    /// AES-GCM opens into the buffer it returns: no intermediate copy is freed unwiped.
    @Test func openingLeavesNoOtherCopyOfThePlaintext() throws {
        let marker = try MemoryMarker()
        var plaintext = marker.reveal()
        let key = try BackupCrypto.randomBytes(32)
        let nonce = try BackupCrypto.randomBytes(12)
        let sealed = try BackupCrypto.aes256GCMSeal(key: key, nonce: nonce, plaintext: plaintext, aad: [1, 2, 3])
        plaintext.overwriteWithZeros()
        #expect(marker.copiesInMemory() == 0, "the marker must exist only where the test can see it")

        let opened = try BackupCrypto.aes256GCMOpen(key: key, nonce: nonce, ciphertext: sealed.ciphertext, tag: sealed.tag, aad: [1, 2, 3])
        #expect(opened.withUnsafeBytes { marker.matches($0) })
        #expect(marker.copiesInMemory() == 1, "the returned plaintext, and nothing else")
        opened.wipe()
        #expect(marker.copiesInMemory() == 0, "a copy of the plaintext was left in memory")
    }
}

/// 48 random bytes that stand for a secret, and a search of the whole process's writable memory
/// for them. The marker itself is kept masked, and the search pattern lives in one buffer whose
/// own match is not counted, so any copy found is a copy the code under test made.
final class MemoryMarker {
    private let masked: [UInt8]
    static let mask: UInt8 = 0xA5

    init() throws {
        masked = try BackupCrypto.randomBytes(48).map { $0 ^ Self.mask }
    }

    /// The secret itself (the caller owns and wipes it).
    func reveal() -> [UInt8] { masked.map { $0 ^ Self.mask } }

    /// Compared where the bytes are: a copy to compare would itself be a copy left behind.
    func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == masked.count && zip(bytes, masked).allSatisfy { $0 == $1 ^ Self.mask }
    }

    /// How many places in writable memory hold the secret.
    func copiesInMemory() -> Int {
        let pattern = UnsafeMutableRawBufferPointer.allocate(byteCount: masked.count, alignment: 16)
        defer {
            explicit_bzero(pattern.baseAddress!, pattern.count)
            pattern.deallocate()
        }
        for (index, byte) in masked.enumerated() { pattern[index] = byte ^ Self.mask }
        let own = UInt(bitPattern: pattern.baseAddress)
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return -1 }
        let mem = open("/proc/self/mem", O_RDONLY)
        guard mem >= 0 else { return -1 }
        defer { close(mem) }
        var count = 0
        let chunkSize = 1 << 22
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize + 64, alignment: 16)
        defer {
            explicit_bzero(chunk.baseAddress!, chunk.count)
            chunk.deallocate()
        }
        let chunkStart = UInt(bitPattern: chunk.baseAddress)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].contains("w") else { continue }
            if fields.count >= 6, fields[5].hasPrefix("[v") { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2 else { continue }
            var address = bounds[0]
            while address < bounds[1] {
                let size = min(UInt(chunkSize), bounds[1] - address)
                let read = pread(mem, chunk.baseAddress, Int(size), off_t(Int64(bitPattern: UInt64(address))))
                guard read > 0 else { break }
                var offset = 0
                let first = Int32(pattern[0])
                while offset + masked.count <= read {
                    // memchr for the first byte, then memcmp (Glibc's memmem is not imported).
                    guard let hit = memchr(chunk.baseAddress! + offset, first, read - offset) else { break }
                    let at = hit - chunk.baseAddress!
                    if at + masked.count <= read, memcmp(hit, pattern.baseAddress!, pattern.count) == 0 {
                        let where_ = UInt(at) + address
                        // Neither the pattern itself nor what the scan buffer holds of earlier reads.
                        if where_ != own, !(chunkStart <= where_ && where_ < chunkStart + UInt(chunk.count)) { count += 1 }
                    }
                    offset = at + 1
                }
                // A marker cut by a chunk boundary is not missed: step back by its length.
                address += size > UInt(masked.count) && address + size < bounds[1] ? size - UInt(masked.count) : size
            }
        }
        return count
    }
}
