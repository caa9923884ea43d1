import BLEProtocol
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
    private let notSecured = Locked(false)
    /// What one check observed for later checks to judge (a whole scan is run once and judged
    /// by several checks), by key.
    private let records = Locked<[String: any Sendable]>([:])
    /// Time since the session began, on its clock (the bench's scaled clock in tests).
    let elapsed: @Sendable () -> Duration

    /// How long a connection may take before the device counts as gone.
    static let connectDeadline: Duration = .seconds(10)

    init(address: BLEAddress, advertisement: Advertisement, central: BLECentral, clock: any Clock<Duration>) {
        self.address = address
        self.advertisement = advertisement
        self.central = central
        self.clock = clock
        elapsed = Self.stopwatch(clock)
    }

    private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// Keeps what a check observed under `key`, for the checks that judge it.
    func remember(_ value: some Sendable, as key: String) { records.withLock { $0[key] = value } }

    /// What a check kept under `key`, if it ran and kept a `T`.
    func recalled<T: Sendable>(_ key: String, as type: T.Type = T.self) -> T? { records.withLock { $0[key] as? T } }

    /// The live connection, connecting first if there is none (or the last one ended).
    func connection() async throws(CheckFinding) -> BLEConnection {
        if let live = state.withLock({ $0.connection }), live.disconnectReason == nil { return live }
        do throws(BLEError) {
            let connection = try await central.connect(address, timeout: Self.connectDeadline)
            _ = try? await connection.bearer.exchangeMTU(central.host.configuration.attMTU)
            state.withLock { $0 = (connection, $0.trees) }
            return connection
        } catch {
            if case .pairingFailed = error { notSecured.withLock { $0 = true } }
            if case .bondRejected = error { notSecured.withLock { $0 = true } }
            throw .fail(expected: "a connection within \(Self.connectDeadline.seconds) s", seen: "\(error)")
        }
    }

    /// The last connection failed because pairing with the device did (or it refused its bond):
    /// the contract's exit 1 with the reason, not a device that could not be reached.
    var pairingFailed: Bool { notSecured.withLock { $0 } }

    /// Ends the connection and waits (at most 5 s) for the link to be down.
    func disconnect() async {
        guard let connection = state.withLock({ s -> BLEConnection? in defer { s.connection = nil }; return s.connection }) else { return }
        await connection.disconnect()
    }

    /// A fresh connection: ends the live one first (the mirror starts each connection idle).
    func reconnect() async throws(CheckFinding) -> BLEConnection {
        await disconnect()
        return try await connection()
    }

    /// The advertising reports of this device heard within `limit` (a scan of its own, with scan
    /// requests, so a legacy advertiser's scan responses come too), stopping early once `enough`
    /// holds for what was heard. Works while connected: that is how a check sees a mirror
    /// advertise when it should not.
    func advertisingReports(within limit: Duration,
                            until enough: @escaping @Sendable ([LEAdvertisingReport]) -> Bool = { _ in false })
        async throws(CheckFinding) -> [LEAdvertisingReport] {
        let reports: AsyncThrowingStream<LEAdvertisingReport, any Error>
        do throws(BLEError) { reports = try await central.host.scan(active: true) } catch {
            throw .fail(expected: "the controller to scan", seen: "\(error)")
        }
        let address = address, clock = clock
        let heard = Locked<[LEAdvertisingReport]>([])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await report in reports where report.address.bytes == address.bytes && report.address.kind == address.kind {
                        let all = heard.withLock { list -> [LEAdvertisingReport] in
                            list.append(report)
                            return list
                        }
                        if enough(all) { return }
                    }
                } catch {}
            }
            group.addTask { try? await clock.sleep(for: limit) }
            _ = await group.next()
            group.cancelAll()
        }
        return heard.withLock { $0 }
    }

    /// A Write Command (no response): the mirror must ignore it on a characteristic that only
    /// takes Write Requests.
    func writeCommand(_ characteristic: GATTCharacteristic, _ value: [UInt8]) async throws(CheckFinding) {
        let connection = try await connection()
        do throws(BLEError) { try await connection.gatt.writeWithoutResponse(characteristic.valueHandle, value) } catch {
            throw .fail(expected: "a Write Command to \(characteristic.uuid) sent", seen: "\(error)")
        }
    }

    /// Every notification the link carries, subscribed or not (to see one that should not come),
    /// from now on.
    func allNotifications() async throws(CheckFinding) -> NotificationValues<ATTNotification> {
        try await connection().bearer.notifications()
    }

    /// Writes `01 00` to the characteristic's CCCD without a stream of its own (the values come
    /// through `allNotifications()`).
    func enableNotifications(_ characteristic: GATTCharacteristic) async throws(CheckFinding) {
        let connection = try await connection()
        do throws(BLEError) { try await connection.gatt.enableNotifications(characteristic) } catch {
            throw .fail(expected: "notifications of \(characteristic.uuid) to turn on through its CCCD", seen: "\(error)")
        }
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
    func next<Value: Sendable>(_ values: NotificationValues<Value>, within limit: Duration,
                               where accept: @escaping @Sendable (Value) -> Bool = { _ in true }) async -> Value? {
        let clock = clock
        return await withTaskGroup(of: Value?.self) { group in
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
