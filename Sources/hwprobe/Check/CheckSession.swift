import HAL
import Transports

/// The device a profile is checked against, and what the checks share: the advertisement it was
/// found with, one connection at a time (made when a check first needs it, again after a check
/// disconnects), the discovered database. Every wait has a deadline and says what it waited for.
final class CheckSession: Sendable {
    let address: BLEAddress
    let advertisement: Advertisement
    let central: BLECentral
    let clock: any Clock<Duration>
    private let state = Locked<(connection: BLEConnection?, trees: [GATTServiceTree]?)>((nil, nil))

    /// How long a connection may take before the device counts as gone.
    static let connectDeadline: Duration = .seconds(10)

    init(address: BLEAddress, advertisement: Advertisement, central: BLECentral, clock: any Clock<Duration>) {
        self.address = address
        self.advertisement = advertisement
        self.central = central
        self.clock = clock
    }

    /// The live connection, connecting first if there is none (or the last one ended).
    func connection() async throws(CheckFinding) -> BLEConnection {
        if let live = state.withLock({ $0.connection }), live.disconnectReason == nil { return live }
        do throws(BLEError) {
            let connection = try await central.connect(address, timeout: Self.connectDeadline)
            _ = try? await connection.bearer.exchangeMTU(central.host.configuration.attMTU)
            state.withLock { $0 = (connection, $0.trees) }
            return connection
        } catch {
            throw .fail(expected: "a connection within \(Self.connectDeadline.seconds) s", seen: "\(error)")
        }
    }

    /// Ends the connection and waits (at most 5 s) for the link to be down.
    func disconnect() async {
        guard let connection = state.withLock({ s -> BLEConnection? in defer { s.connection = nil }; return s.connection }) else { return }
        await connection.disconnect()
    }

    /// The whole database, discovered once.
    func database() async throws(CheckFinding) -> [GATTServiceTree] {
        if let trees = state.withLock({ $0.trees }) { return trees }
        let connection = try await connection()
        do throws(BLEError) {
            let trees = try await connection.gatt.discoverAll()
            state.withLock { $0.trees = trees }
            return trees
        } catch {
            throw .fail(expected: "the GATT database to be discoverable", seen: "\(error)")
        }
    }

    /// The characteristic with `uuid` in service `service`; a check that needs one the device
    /// lacks is skipped (its own check fails for that).
    func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID, name: String) async throws(CheckFinding) -> GATTCharacteristic {
        let trees = try await database()
        guard let found = trees.first(where: { $0.service.uuid == service })?.characteristics.first(where: { $0.uuid == uuid }) else {
            throw .skip("needs \(name) (\(uuid)), which the device does not have")
        }
        return found
    }

    /// A read: the value, or the ATT error code it was refused with.
    func read(_ characteristic: GATTCharacteristic) async throws(CheckFinding) -> Result<[UInt8], ATTCode> {
        let connection = try await connection()
        do throws(BLEError) { return .success(try await connection.gatt.read(characteristic.valueHandle)) } catch {
            if case .att(let failure) = error { return .failure(ATTCode(failure.code)) }
            throw .fail(expected: "an answer to a read of \(characteristic.uuid)", seen: "\(error)")
        }
    }

    /// A Write Request: nil when accepted, else the ATT error code.
    func write(_ characteristic: GATTCharacteristic, _ value: [UInt8]) async throws(CheckFinding) -> ATTCode? {
        let connection = try await connection()
        do throws(BLEError) {
            try await connection.gatt.write(characteristic.valueHandle, value)
            return nil
        } catch {
            if case .att(let failure) = error { return ATTCode(failure.code) }
            throw .fail(expected: "an answer to a write of \(characteristic.uuid)", seen: "\(error)")
        }
    }

    /// Turns notifications (or indications) on through the CCCD.
    func subscribe(_ characteristic: GATTCharacteristic) async throws(CheckFinding) -> NotificationValues<[UInt8]> {
        let connection = try await connection()
        do throws(BLEError) { return try await connection.gatt.subscribe(characteristic) } catch {
            throw .fail(expected: "notifications of \(characteristic.uuid) to turn on through its CCCD", seen: "\(error)")
        }
    }

    /// The first value from `values` that `accept` takes, waiting at most `limit`; nil when none came.
    func next(_ values: NotificationValues<[UInt8]>, within limit: Duration,
              where accept: @escaping @Sendable ([UInt8]) -> Bool = { _ in true }) async -> [UInt8]? {
        let clock = clock
        return await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                for await value in values where accept(value) { return value }
                return nil
            }
            group.addTask {
                try? await clock.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// An ATT error code with its name, as findings say it (`0x81`).
struct ATTCode: Error, Hashable, Sendable, CustomStringConvertible {
    var code: UInt8
    init(_ code: UInt8) { self.code = code }
    var description: String { String(format: "ATT error 0x%02X", code) }
}
