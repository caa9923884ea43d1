import Foundation
import HAL
import Transports

/// `hwprobe gatt`: connect, dump the peripheral's whole GATT database with names, then do what
/// was asked in the contract's order (docs/cli.md, "`gatt` values"): reads, writes in the order
/// given, a subscription. Everything the person typed is checked before the controller opens, and
/// every ID against the database before the first read, so a mistake costs no write.
struct GattCommand: Sendable {
    var console: Console
    var transports: TransportFactory

    /// How long to look for a peripheral given without /public or /random.
    static let advertisingWait: Duration = .seconds(5)

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let text = invocation.value("--hci") else { throw CLIFailure(kind: .usage, message: "--hci is required") }
        let uri = try DeviceURIArgument.parse(text, option: "--hci")
        guard let target = invocation.positionals.first else { throw CLIFailure(kind: .usage, message: "missing ADDRESS") }
        let explicitKind = target.contains("/")
        guard var address = BLEAddress(string: target) else {
            throw CLIFailure(kind: .usage, message: "ADDRESS must look like AA:BB:CC:DD:EE:FF, optionally with /public or /random")
        }
        let request = try GattRequest(invocation)
        let central = try await transports.central(for: uri, snoopPath: invocation.value("--btsnoop"))
        let outcome: Result<Int32, CLIFailure>
        do throws(BLEError) {
            if !explicitKind {
                // Without /public or /random, use the type the peripheral advertises with.
                console.status("looking for \(address) (up to \(Int(Self.advertisingWait / .seconds(1))) s)")
                address = try await advertisedAddress(address, on: central)
            }
            console.status("connecting to \(address)")
            let connection: BLEConnection
            do throws(BLEError) {
                connection = try await central.connect(address)
            } catch {
                // A type typed wrong is the usual reason (issue 27, item 17): see whether the
                // same address advertises with the other type, and say so.
                guard case .connectionTimedOut(let typed) = error, explicitKind else { throw error }
                console.status("\(typed) did not answer; looking for it with the other address type")
                if let advertised = try? await advertisedAddress(address, on: central, within: .seconds(2)), advertised.kind != typed.kind {
                    throw BLEError.invalid("\(typed)/\(typed.kind.rawValue) did not accept the connection: it advertises as "
                                   + "\(advertised)/\(advertised.kind.rawValue); give that (or leave the type out)")
                }
                throw error
            }
            outcome = await Result { () async throws(CLIFailure) -> Int32 in
                try await session(on: connection, address: address, central: central, request: request, json: invocation.wantsJSON)
            }
            await connection.disconnect()
        } catch {
            outcome = .failure(CLIFailure(error))
        }
        console.status(nil)
        await central.close()
        return try outcome.get()
    }

    /// Everything on one connection: discovery, the checks, reads, the dump, writes, the subscription.
    private func session(on connection: BLEConnection, address: BLEAddress, central: BLECentral,
                         request: GattRequest, json: Bool) async throws(CLIFailure) -> Int32 {
        let mtu = (try? await connection.bearer.exchangeMTU(central.host.configuration.attMTU)) ?? 23
        console.status("discovering the GATT database of \(address)")
        let trees: [GATTServiceTree]
        do { trees = try await connection.gatt.discoverAll() } catch { throw CLIFailure(error) }
        let database = GattDatabase(address: address, trees: trees)

        // Every ID, before anything is read or written.
        var reads = try request.reads.map { id throws(CLIFailure) in try database.characteristic(id, for: .read, option: "--read") }
        let writes = try request.writes.map { write throws(CLIFailure) in
            (write, try database.characteristic(write.id, for: write.withResponse ? .write : .writeCommand, option: write.option))
        }
        let subscribed = try request.subscription.map { s throws(CLIFailure) in
            try database.characteristic(s.id, for: .subscribe, option: "--subscribe")
        }
        let largest = Int(mtu) - 3
        for (write, c) in writes where write.value.count > largest {
            throw CLIFailure(kind: .usage, message: "\(write.option) \(GattText.label(c)): \(write.value.count) bytes, but one "
                             + "\(write.withResponse ? "Write Request" : "Write Command") carries at most \(largest) at this "
                             + "connection's ATT MTU (\(mtu)); longer values are not supported")
        }

        // Reads: the ones asked for, then (with all) every other readable one, in database order.
        if request.readAll {
            for c in database.characteristics where c.properties.contains(.read) && !reads.contains(c) { reads.append(c) }
        }
        var results: [UInt16: GattReport.ReadResult] = [:]
        for (index, c) in reads.enumerated() {
            progress(index, of: reads.count, "reading \(GattText.label(c))", once: "reading \(Self.counted(reads.count, "characteristic")) of \(address)")
            do {
                results[c.valueHandle] = .value(try await connection.gatt.read(c.valueHandle))
            } catch .att(let failure) where request.readAll {
                results[c.valueHandle] = .refused(failure.code)
            } catch .att(let failure) {
                throw GattText.refused(failure, "--read \(GattText.label(c))", of: c.uuid)
            } catch {
                throw CLIFailure(error)
            }
        }
        console.status(nil)
        var report = GattReport(address: address, mtu: mtu, trees: trees, reads: results)
        if !json { console.out(report.text) }

        // Writes, in the order given.
        var made: [GattReport.Write] = []
        for (index, (write, c)) in writes.enumerated() {
            progress(index, of: writes.count, "writing to \(GattText.label(c))", once: "writing \(Self.counted(writes.count, "value")) to \(address)")
            do {
                if write.withResponse {
                    try await connection.gatt.write(c.valueHandle, write.value)
                } else {
                    try await connection.gatt.writeWithoutResponse(c.valueHandle, write.value)
                }
            } catch .att(let failure) {
                throw GattText.refused(failure, "\(write.option) \(HexValue.text(write.value)) to \(GattText.label(c))", of: c.uuid)
            } catch {
                throw CLIFailure(error)
            }
            let entry = GattReport.Write(uuid: c.uuid.description, name: BluetoothNames.bench.name(of: c.uuid), handle: c.valueHandle,
                                         value: HexValue.text(write.value), withResponse: write.withResponse)
            made.append(entry)
            if !json { console.out(GattReport.text(entry)) }
        }
        console.status(nil)
        if !made.isEmpty { report.writes = made }

        var exitCode: Int32 = 0
        if let subscription = request.subscription, let c = subscribed {
            let (record, ending) = try await GattSubscriber(console: console, json: json)
                .run(c, on: connection, count: subscription.count, seconds: subscription.seconds)
            if ending == .linkLost {
                let reason = connection.disconnectReason.map { ": \($0)" } ?? ""
                throw CLIFailure(kind: .disconnected, message: "\(address) went away during the subscription to \(GattText.label(c)) "
                                 + "after \(record.received) values\(reason)")
            }
            if case .interrupted(let signal) = ending, signal != SIGINT {
                // Ctrl-C is one of the three ways a subscription ends (exit 0); SIGTERM and the
                // like still end the run as the signal policy has it, after saying what came.
                exitCode = SignalHandling.exitCode(for: signal)
            }
            report.subscription = GattReport.Subscription(
                uuid: c.uuid.description, name: BluetoothNames.bench.name(of: c.uuid), handle: c.valueHandle, received: record.received,
                values: [], truncated: record.truncated ? true : nil, dropped: record.dropped > 0 ? record.dropped : nil)
            if json {
                GattReport.writeJSON(report, values: record) { console.out($0) }
                return exitCode
            }
        }
        if json { console.out(JSON.encode(report)) }
        return exitCode
    }

    /// Says which step of a phase is under way: on a terminal each step rewrites the status line
    /// (`reading 2A19 (Battery Level, handle 18): 3 of 9`); in a log the phase is said once.
    private func progress(_ index: Int, of total: Int, _ step: String, once: String) {
        if console.errIsTerminal {
            console.status(step + (total > 1 ? ": \(index + 1) of \(total)" : ""))
        } else if index == 0 {
            console.status(once)
        }
    }

    static func counted(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    private func advertisedAddress(_ address: BLEAddress, on central: BLECentral, within wait: Duration = Self.advertisingWait) async throws(BLEError) -> BLEAddress {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: wait)
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
        guard let found else { throw .notFound("\(address) (not advertising within \(wait.components.seconds) seconds)") }
        return found
    }
}

extension Result where Failure == CLIFailure {
    /// `Result(catching:)` for an async body with a typed error.
    init(_ body: () async throws(CLIFailure) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
