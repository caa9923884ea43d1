import BLEProtocol
import Foundation
import HAL
import Transports

/// `hwprobe bonds [--hci URI] [--remove ADDRESS|all] [--json]` (hwprobe-cli.md, third edition):
/// lists the bond store — with `--hci`, that controller's; without, every controller's store in
/// the bonds directory — and with `--remove` forgets one bond or all of one controller's. Prints
/// identities, key kinds and security, never a key's value.
struct BondsCommand: Sendable {
    var console: Console
    var transports: TransportFactory

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        let remove = invocation.value("--remove")
        var removing: BLEAddress?
        if let remove, remove != "all" {
            guard let address = BLEAddress(string: remove) else {
                throw CLIFailure(kind: .usage, message: "--remove takes an address (AA:BB:CC:DD:EE:FF) or all")
            }
            removing = address
        }
        var stores: [BondStore]
        if let text = invocation.value("--hci") {
            let uri = try DeviceURIArgument.parse(text, option: "--hci")
            let central = try await transports.central(for: uri, snoopPath: invocation.value("--btsnoop"))
            let result: Result<StoredBonds, CLIFailure>
            do throws(CLIFailure) { result = .success(try await PairingOptions.bondStore(host: central.host, environment: console.environment)) } catch {
                result = .failure(error)
            }
            await central.close()
            stores = [try result.get().current]
        } else {
            guard remove == nil else { throw CLIFailure(kind: .usage, message: "--remove needs --hci URI: whose bond to forget") }
            stores = try Self.allStores(environment: console.environment)
        }
        if remove != nil, let store = stores.first {
            // Read again and written under the store's lock: bonds another hwprobe kept meanwhile stay.
            var found = true
            let updated: BondStore
            do {
                updated = try BondStore.update(controller: store.controller, path: store.path) { current in
                    if let removing { found = current.remove(removing) } else { current.removeAll() }
                }
            } catch { throw CLIFailure(kind: .permission, message: "\(error)") }
            if let removing, !found { throw CLIFailure(kind: .usage, message: "no bond for \(removing) on controller \(store.controller)") }
            stores = [updated]
        }
        console.out(invocation.wantsJSON ? Self.json(stores) : Self.text(stores))
        return ExitCode.success
    }

    /// Every store in the bonds directory, by the controller its file is named after.
    static func allStores(environment: [String: String]) throws(CLIFailure) -> [BondStore] {
        let any = BLEAddress(bytes: [0, 0, 0, 0, 0, 0])
        guard let any, let probe = try? BondStore.defaultPath(controller: any, environment: environment) else {
            throw CLIFailure(kind: .usage, message: "no place for the bond store: set HOME (or XDG_STATE_HOME)")
        }
        let directory = String(probe[..<(probe.lastIndex(of: "/") ?? probe.endIndex)])
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        var stores: [BondStore] = []
        for name in names {
            guard let controller = BLEAddress(string: String(name.dropLast(5))) else { continue }
            do { stores.append(try BondStore.load(controller: controller, path: directory + "/" + name)) } catch {
                throw CLIFailure(kind: .damaged, message: "\(error)")
            }
        }
        return stores
    }

    static func text(_ stores: [BondStore]) -> String {
        guard stores.contains(where: { !$0.bonds.isEmpty }) else { return "no bonds\n" }
        var lines: [String] = []
        for store in stores where !store.bonds.isEmpty {
            lines.append("controller \(store.controller):")
            for bond in store.bonds {
                lines.append("  \(bond.identity)  \(bond.security)  keys: \(bond.keyNames.joined(separator: ", "))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{"controllers": [{"controller", "bonds": [{"identity", "keys", "authenticated", "secureConnections", "keySize"}]}]}`.
    static func json(_ stores: [BondStore]) -> String {
        struct Entry: Encodable {
            var identity: String
            var keys: [String]
            var authenticated: Bool
            var secureConnections: Bool
            var keySize: Int
        }
        struct Controller: Encodable {
            var controller: String
            var bonds: [Entry]
        }
        struct Output: Encodable { var controllers: [Controller] }
        let output = Output(controllers: stores.map { store in
            Controller(controller: store.controller.description, bonds: store.bonds.map {
                Entry(identity: $0.identity.description, keys: $0.keyNames, authenticated: $0.isAuthenticated,
                      secureConnections: $0.isSecureConnections, keySize: $0.keySize)
            })
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(output) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
