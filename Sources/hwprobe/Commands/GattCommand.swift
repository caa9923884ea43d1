import HAL
import Transports

/// `hwprobe gatt`: connect and dump the peripheral's whole GATT database.
struct GattCommand: Sendable {
    var console: Console
    var transports: TransportFactory

    struct Report: Encodable, Equatable {
        struct Descriptor: Encodable, Equatable {
            var uuid: String
            var handle: UInt16
        }
        struct Characteristic: Encodable, Equatable {
            var uuid: String
            var handle: UInt16
            var properties: [String]
            var descriptors: [Descriptor]
        }
        struct Service: Encodable, Equatable {
            var uuid: String
            var start: UInt16
            var end: UInt16
            var characteristics: [Characteristic]
        }
        var address: String
        var mtu: UInt16
        var services: [Service]
    }

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(text, option: "--hci")
        guard let target = invocation.positionals.first else { throw CLIFailure(kind: .usage, message: "missing ADDRESS") }
        let explicitKind = target.contains("/")
        guard var address = BLEAddress(string: target) else {
            throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF, optionally with /public or /random")
        }
        let central = try await transports.central(for: uri, snoopPath: invocation.value("--btsnoop"))
        do {
            if !explicitKind {
                // Without /public or /random, use the type the peripheral advertises with.
                address = try await advertisedAddress(address, on: central)
            }
            let connection = try await central.connect(address)
            let mtu = (try? await connection.bearer.exchangeMTU(central.host.configuration.attMTU)) ?? 23
            let trees = try await connection.gatt.discoverAll()
            await connection.disconnect()
            await central.close()
            let report = Self.report(address: address, mtu: mtu, trees: trees)
            console.out(invocation.wantsJSON ? JSON.encode(report) : Self.text(report))
            return 0
        } catch {
            await central.close()
            throw CLIFailure(error)
        }
    }

    private func advertisedAddress(_ address: BLEAddress, on central: BLECentral) async throws(BLEError) -> BLEAddress {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        let discovery = central.discover()
        let found = await withTaskGroup(of: BLEAddress?.self) { group in
            group.addTask {
                do {
                    for try await device in discovery where device.address.bytes == address.bytes { return device.address }
                } catch {}
                return nil
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else { throw .notFound("\(address) (not advertising within 5 seconds)") }
        return found
    }

    static func report(address: BLEAddress, mtu: UInt16, trees: [GATTServiceTree]) -> Report {
        Report(address: address.description, mtu: mtu, services: trees.map { tree in
            Report.Service(uuid: tree.service.uuid.description, start: tree.service.start, end: tree.service.end,
                           characteristics: tree.characteristics.map { c in
                               Report.Characteristic(uuid: c.uuid.description, handle: c.valueHandle, properties: c.properties.names,
                                                     descriptors: c.descriptors.map { .init(uuid: $0.uuid.description, handle: $0.handle) })
                           })
        })
    }

    static func text(_ report: Report) -> String {
        var lines = ["\(report.address)  MTU \(report.mtu)"]
        for service in report.services {
            lines.append("service \(service.uuid)  handles \(service.start)–\(service.end)")
            for c in service.characteristics {
                lines.append("  characteristic \(c.uuid)  handle \(c.handle)  \(c.properties.joined(separator: ","))")
                for d in c.descriptors { lines.append("    descriptor \(d.uuid)  handle \(d.handle)") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
