import BLEProtocol
import Foundation
import HAL
import LinuxIO
import Testing
@testable import Transports

/// The bond store (issue 29, item 2): where it lives, what it keeps, how it is written (0600,
/// whole or not at all, its directories 0700), what it refuses to read, and that no key shows in
/// anything printable.
@Suite struct BondStoreTests {
    struct Scratch {
        let directory: String
        init() throws {
            directory = "/dev/shm/hwprobe-bonds-\(getpid())-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        func remove() { try? FileManager.default.removeItem(atPath: directory) }
        func mode(_ path: String) -> mode_t? {
            var info = stat()
            return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
        }
    }

    static let controller = BLEAddress(bytes: [0x00, 0x1B, 0xDC, 0x01, 0x02, 0x03])!
    static let irk = SecurityKey(bytes: Hex.bytes("ec0234a357c8ad05341010a60a397d9b") ?? [])!

    static func secureConnectionsBond() -> Bond {
        let key = EncryptionKey(ltk: SecurityKey(bytes: Array(1...16))!)
        return Bond(identity: BLEAddress(bytes: [0xC1, 0x22, 0x33, 0x44, 0x55, 0x66], kind: .random)!, irk: irk,
                    centralKey: key, peripheralKey: key, isAuthenticated: true, isSecureConnections: true, keySize: 16)
    }

    static func legacyBond() -> Bond {
        Bond(identity: BLEAddress(bytes: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55])!, irk: nil,
             centralKey: EncryptionKey(ltk: SecurityKey(bytes: Array(17...32))!, ediv: 0xBEEF, rand: 0xFEDC_BA98_7654_3210),
             peripheralKey: EncryptionKey(ltk: SecurityKey(bytes: Array(33...48))!, ediv: 7, rand: UInt64.max),
             isAuthenticated: false, isSecureConnections: false, keySize: 7)
    }

    @Test func theDefaultPathFollowsXDGStateHome() throws {
        #expect(try BondStore.defaultPath(controller: Self.controller, environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"])
            == "/s/hwprobe/bonds/00:1B:DC:01:02:03.json")
        #expect(try BondStore.defaultPath(controller: Self.controller, environment: ["HOME": "/h"]) == "/h/.local/state/hwprobe/bonds/00:1B:DC:01:02:03.json")
        // A relative XDG_STATE_HOME is ignored, as the XDG specification says.
        #expect(try BondStore.defaultPath(controller: Self.controller, environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]).hasPrefix("/h/"))
        #expect(throws: BondStoreError.noHome(.bonds)) { try BondStore.defaultPath(controller: Self.controller, environment: [:]) }
    }

    @Test func bondsAndOurIdentityComeBackAsTheyWereKept() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let old = umask(0)
        defer { umask(old) }
        let path = scratch.directory + "/state/hwprobe/bonds/x.json"
        var store = try BondStore.load(controller: Self.controller, path: path)
        #expect(store.bonds.isEmpty)
        store.add(Self.secureConnectionsBond())
        store.add(Self.legacyBond())
        var random = SecurityRandom.seeded(4)
        let identity = store.ensureLocalIdentity(address: Self.controller, random: &random)
        #expect(store.ensureLocalIdentity(address: Self.controller, random: &random) == identity)
        try store.save()
        #expect(scratch.mode(path) == 0o600)
        #expect(scratch.mode(scratch.directory + "/state/hwprobe/bonds") == 0o700)
        #expect(scratch.mode(scratch.directory + "/state") == 0o700)
        let loaded = try BondStore.load(controller: Self.controller, path: path)
        #expect(loaded.bonds == [Self.secureConnectionsBond(), Self.legacyBond()])
        #expect(loaded.localIdentity == identity)
    }

    @Test func aDeviceIsFoundByItsPrivateAddressAndForgottenByIt() throws {
        var store = BondStore(controller: Self.controller, path: "/nonexistent/x.json")
        store.add(Self.secureConnectionsBond())
        store.add(Self.legacyBond())
        var random = SecurityRandom.seeded(9)
        let rpa = try ResolvablePrivateAddress.make(irk: Self.irk, random: &random)
        #expect(store.identity(of: rpa) == Self.secureConnectionsBond().identity)
        #expect(store.bond(for: Self.legacyBond().identity) == Self.legacyBond())
        // A new pairing with the same device replaces its bond.
        var again = Self.secureConnectionsBond()
        again.isAuthenticated = false
        store.add(again)
        #expect(store.bonds.count == 2 && store.bond(for: rpa)?.isAuthenticated == false)
        let removed = store.remove(rpa)
        #expect(removed)
        #expect(store.bond(for: rpa) == nil && store.bonds.count == 1)
        let again2 = store.remove(rpa)
        #expect(!again2)
    }

    @Test func nothingPrintableShowsAKey() throws {
        var store = BondStore(controller: Self.controller, path: "/x/y.json")
        store.add(Self.legacyBond())
        let hex = Self.legacyBond().centralKey?.ltk.revealedHex ?? "?"
        for text in ["\(store)", "\(Self.legacyBond())", String(reflecting: Self.legacyBond()), "\(store.bonds)"] {
            #expect(!text.contains(hex) && !text.contains(String(hex.prefix(8))), "\(text)")
        }
    }

    @Test func filesThatCannotBeTrustedAreRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var store = BondStore(controller: Self.controller, path: scratch.directory + "/good.json")
        store.add(Self.secureConnectionsBond())
        try store.save()
        let good = try Data(contentsOf: URL(fileURLWithPath: store.path))

        // Others may read it.
        let open = scratch.directory + "/open.json"
        try good.write(to: URL(fileURLWithPath: open))
        chmod(open, 0o644)
        #expect(throws: BondStoreError.refused(.bonds, .tooOpen(path: open, mode: 0o644))) { try BondStore.load(controller: Self.controller, path: open) }
        // A symbolic link to a good store.
        let link = scratch.directory + "/link.json"
        symlink(store.path, link)
        #expect(throws: BondStoreError.refused(.bonds, .wrongKind(path: link, found: .symbolicLink))) { try BondStore.load(controller: Self.controller, path: link) }
        // A directory.
        let directory = scratch.directory + "/dir.json"
        mkdir(directory, 0o700)
        #expect(throws: BondStoreError.refused(.bonds, .wrongKind(path: directory, found: .directory))) { try BondStore.load(controller: Self.controller, path: directory) }
        // Too big.
        let big = scratch.directory + "/big.json"
        try Data(count: BondStore.sizeLimit + 1).write(to: URL(fileURLWithPath: big))
        chmod(big, 0o600)
        #expect(throws: BondStoreError.refused(.bonds, .tooLarge(path: big, size: BondStore.sizeLimit + 1, limit: BondStore.sizeLimit))) {
            try BondStore.load(controller: Self.controller, path: big)
        }
        // Another user's (only root can make one here).
        if geteuid() == 0 {
            let theirs = scratch.directory + "/theirs.json"
            try good.write(to: URL(fileURLWithPath: theirs))
            chmod(theirs, 0o600)
            chown(theirs, 65534, 65534)
            #expect(throws: BondStoreError.refused(.bonds, .wrongOwner(path: theirs, owner: 65534, expected: 0))) { try BondStore.load(controller: Self.controller, path: theirs) }
        }
    }

    @Test func damagedOrForeignStoresSaySo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var store = BondStore(controller: Self.controller, path: scratch.directory + "/s.json")
        store.add(Self.legacyBond())
        try store.save()
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        let cases: [(String, String)] = [
            ("not json", "not the JSON of a bond store"),
            (text.replacingOccurrences(of: "\"version\" : 1", with: "\"version\" : 2"), "version 2"),
            (text.replacingOccurrences(of: "\"keySize\" : 7", with: "\"keySize\" : 40"), "key size 40"),
            (text.replacingOccurrences(of: "00:1B:DC:01:02:03", with: "00:1B:DC:01:02:04"), "controller 00:1B:DC:01:02:04"),
        ]
        for (content, reason) in cases {
            try content.write(toFile: store.path, atomically: false, encoding: .utf8)
            chmod(store.path, 0o600)
            do {
                _ = try BondStore.load(controller: Self.controller, path: store.path)
                Issue.record("loaded a damaged store (\(reason))")
            } catch {
                guard case .damaged(_, _, let said) = error else { Issue.record("\(error)"); continue }
                #expect(said.contains(reason), "\(said)")
                #expect(error.description.contains("hwprobe bonds --remove all"))
            }
        }
    }

    @Test func aFailedWriteLeavesTheOldStore() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var store = BondStore(controller: Self.controller, path: scratch.directory + "/s.json")
        store.add(Self.legacyBond())
        try store.save()
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))
        // The directory of a store at a path under a file cannot be made: nothing written.
        let blocked = BondStore(controller: Self.controller, path: store.path + "/inside/s.json", bonds: [Self.secureConnectionsBond()])
        #expect(throws: BondStoreError.self) { try blocked.save() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory) == ["s.json"])
    }

    /// Two processes that loaded the same controller's store at their start, each keeping a new
    /// bond: the second reads the store again under the lock, so the first one's bond stays.
    @Test func twoKeepersOfOneStoreKeepEachOthersBonds() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.directory + "/bonds/00:1B:DC:01:02:03.json"
        let first = StoredBonds(try BondStore.load(controller: Self.controller, path: path))
        let second = StoredBonds(try BondStore.load(controller: Self.controller, path: path))
        try first.keep(Self.secureConnectionsBond())
        try second.keep(Self.legacyBond())
        let kept = try BondStore.load(controller: Self.controller, path: path)
        #expect(Set(kept.bonds.map(\.identity)) == [Self.secureConnectionsBond().identity, Self.legacyBond().identity])
        #expect(second.current.bonds.count == 2, "the keeper's own view missed the other's bond")
    }

    /// A change waits for the lock another process holds, and gives up at its deadline saying so.
    @Test func aChangeGivesUpWhenTheStoreStaysLocked() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.directory + "/00:1B:DC:01:02:03.json"
        // Another open of the directory holding the flock stands for another process.
        let outcome = try DirectoryLock.withLock(scratch.directory, within: .seconds(1)) { () -> Result<Int, StateStoreError> in
            do throws(StateStoreError) {
                return .success(try StateStoreFile.locked(path: path, kind: .bonds, timeout: .milliseconds(30)) { () throws(StateStoreError) -> Int in 1 })
            } catch { return .failure(error) }
        }
        guard case .failure(.locked(.bonds, .busy(let locked, _))) = outcome else {
            Issue.record("the change went ahead under another's lock: \(outcome)")
            return
        }
        #expect(locked == scratch.directory)
        // Released: the change goes ahead.
        #expect(try StateStoreFile.locked(path: path, kind: .bonds) { () throws(StateStoreError) -> Int in 2 } == 2)
    }
}
