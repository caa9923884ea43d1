import Foundation
import HAL
import LinuxIO
import Testing
@testable import Transports

/// Bind keys (issue 29, item 4): the key as a secret that never prints, the order in which a
/// run's keys are looked up, and the store that keeps them (beside the bond stores, 0600,
/// whole or not at all, refused when it cannot be trusted).
@Suite struct BindKeyStoreTests {
    static let hex = "0728974d657a4b60964c1b1677f35f7c"
    static let other = "687770726f62652d7334303064656d6f"
    static let scale = BLEAddress(string: "8C:D0:B2:F6:BE:EF")!

    @Test func aKeyIs32HexDigitsAndNeverPrints() throws {
        let key = try #require(BindKey.parse(hex: Self.hex))
        #expect(key.withBytes { Array($0) } == Hex.bytes(Self.hex))
        #expect(BindKey.parse(hex: Self.hex.uppercased())?.matches(key) == true)
        for bad in ["", String(Self.hex.dropLast()), Self.hex + "0", Self.hex + "00", "07:28:97:4d:65:7a:4b:60:96:4c:1b:16:77:f3:5f:7c",
                    String(Self.hex.dropLast()) + "g", " " + Self.hex] {
            #expect(BindKey.parse(hex: bad) == nil, "\(bad)")
        }
        #expect(BindKey.make([1, 2, 3]) == nil && BindKey.make(Array(0..<16)) != nil)
        #expect(try #require(BindKey.parse(hex: Self.other)).matches(key) == false)
        var keys = BindKeys()
        keys.set(key, for: Self.scale)
        keys.setForAnyDevice(key)
        for text in ["\(key)", String(reflecting: key), "\(keys)", String(reflecting: keys)] {
            #expect(!text.lowercased().contains(Self.hex.prefix(8)), "\(text)")
        }
        #expect("\(key)" == "BindKey(16 bytes)")
    }

    @Test func typedKeysWinOverKeptOnesAndAScopedOneOverTheOneForAny() throws {
        let typed = try #require(BindKey.parse(hex: Self.hex))
        let forAny = try #require(BindKey.parse(hex: Self.other))
        let kept = try #require(BindKey.make(Array(0..<16)))
        let elsewhere = BLEAddress(string: "D4:12:3A:00:18:1D")!
        var keys = BindKeys()
        #expect(keys.isEmpty && keys.key(for: Self.scale) == nil)
        keys.addStored([(Self.scale, kept), (elsewhere, kept)], from: "/s/bind-keys.json")
        #expect(keys.key(for: Self.scale)?.origin == .stored(path: "/s/bind-keys.json"))
        keys.setForAnyDevice(forAny)
        #expect(keys.key(for: elsewhere)?.key.matches(forAny) == true && keys.key(for: elsewhere)?.origin == .typedForAnyDevice)
        // Compared by the six bytes, whatever type the address was typed with.
        keys.set(typed, for: BLEAddress(string: "8C:D0:B2:F6:BE:EF/random")!)
        #expect(keys.key(for: Self.scale)?.key.matches(typed) == true && keys.key(for: Self.scale)?.origin == .typedForAddress)
        #expect(keys.hasTyped(for: Self.scale) && !keys.hasTyped(for: elsewhere))
    }

    @Test func theStoreKeepsKeysBesideTheBondsPrivatelyAndReadsThemBack() throws {
        let scratch = try BondStoreTests.Scratch()
        defer { scratch.remove() }
        #expect(try BindKeyStore.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/hwprobe/bonds/bind-keys.json")
        #expect(try BindKeyStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/state/hwprobe/bonds/bind-keys.json")
        #expect(throws: BindKeyStoreError.noHome(.bindKeys)) { try BindKeyStore.defaultPath(environment: [:]) }

        let path = try BindKeyStore.defaultPath(environment: ["XDG_STATE_HOME": scratch.directory])
        var store = try BindKeyStore.load(path: path)
        #expect(store.keys.isEmpty, "no file yet: an empty store")
        store.set(try #require(BindKey.parse(hex: Self.other)), for: Self.scale)
        store.set(try #require(BindKey.parse(hex: Self.hex)), for: Self.scale)
        try store.save()
        #expect(scratch.mode(path) == 0o600)
        #expect(scratch.mode(PrivateFile.directoryPath(of: path)) == 0o700)
        let loaded = try BindKeyStore.load(path: path)
        #expect(loaded.keys.count == 1, "a new key for the same scale replaces the old")
        #expect(loaded.key(for: Self.scale)?.matches(try #require(BindKey.parse(hex: Self.hex))) == true)
        #expect(!"\(loaded)".contains(Self.hex.prefix(8)))
        var emptied = loaded
        #expect(emptied.remove(Self.scale) && !emptied.remove(Self.scale))
    }

    @Test func storesThatCannotBeTrustedOrReadAreRefusedWithWhatToDo() throws {
        let scratch = try BondStoreTests.Scratch()
        defer { scratch.remove() }
        let open = scratch.directory + "/open.json"
        try Data(#"{"format": "hwprobe-bind-keys", "version": 1, "keys": []}"#.utf8).write(to: URL(fileURLWithPath: open))
        chmod(open, 0o644)
        #expect(throws: BindKeyStoreError.refused(.bindKeys, .tooOpen(path: open, mode: 0o644))) { try BindKeyStore.load(path: open) }
        for (text, reason) in [("[1, 2]", "not the JSON of a bind key store"),
                               (#"{"format": "hwprobe-bonds", "version": 1, "keys": []}"#, "it is not a bind key store"),
                               (#"{"format": "hwprobe-bind-keys", "version": 2, "keys": []}"#, "version 2"),
                               (#"{"format": "hwprobe-bind-keys", "version": 1, "keys": [{"address": "8C:D0", "key": "00"}]}"#, "the address is damaged"),
                               (#"{"format": "hwprobe-bind-keys", "version": 1, "keys": [{"address": "8C:D0:B2:F6:BE:EF", "key": "0011"}]}"#,
                                "not 32 hex digits")] {
            let path = scratch.directory + "/damaged.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            do {
                _ = try BindKeyStore.load(path: path)
                Issue.record("read \(text)")
            } catch {
                #expect(error.description.contains(reason) && error.description.contains("--save-key"), "\(error)")
            }
        }
    }
}
