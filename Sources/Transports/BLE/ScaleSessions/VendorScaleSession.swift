import HAL
import Synchronization

/// Carries out a `VendorScaleProtocol` on a link: finds the family's characteristics, subscribes,
/// performs the opening exchange within a deadline, then turns readings into `.weight` events.
/// One implementation of the I/O for every vendor family, so each driver is only its protocol
/// value and its rules.
public enum VendorScaleSession {
    /// How long the opening exchange may take, from the first subscription to `.ready`: a scale
    /// that answers at all answers within a second or two; five more covers a slow link.
    public static let handshakeDeadline: Duration = .seconds(8)

    /// `8 s`, `0.6 s`: a deadline as the messages say it.
    static func seconds(_ duration: Duration) -> String {
        let value = duration.inSeconds
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) s" : "\(tenths) s"
    }

    /// Discovers `services` (those present), asks `protocol` which characteristics to subscribe
    /// to, subscribes, runs the opening exchange and returns the connection once it is done.
    /// Every ATT step is bounded by the bearer's own 30 s timeout; the exchange as a whole by
    /// `handshakeDeadline`, on `clock`. On any failure the link is left for the caller to end
    /// (`BLEScaleTransport.connect` disconnects when `open` throws).
    public static func open<P: VendorScaleProtocol>(_ scaleProtocol: P, services: [BluetoothUUID], connection: BLEConnection,
                                                    device: DiscoveredDevice, clock: any Clock<Duration>,
                                                    handshakeDeadline: Duration = handshakeDeadline) async throws(ScaleError) -> any ScaleConnection {
        var logic = scaleProtocol
        var found: [BluetoothUUID: GATTCharacteristic] = [:]
        do {
            for uuid in services {
                for service in try await connection.gatt.primaryServices(uuid: uuid) {
                    for characteristic in try await connection.gatt.characteristics(of: service) where found[characteristic.uuid] == nil {
                        found[characteristic.uuid] = characteristic
                    }
                }
            }
        } catch {
            throw error.scaleError()
        }
        let wanted = try logic.subscriptions(available: Set(found.keys))
        // Listen before subscribing, so nothing sent right after a CCCD write is missed.
        let notifications = connection.bearer.notifications()
        do {
            for uuid in wanted {
                guard let characteristic = found[uuid] else {
                    throw ScaleError.unsupported("characteristic \(uuid) to subscribe to")
                }
                try await connection.gatt.enableNotifications(characteristic)
            }
        } catch let error as BLEError {
            if case .att(let failure) = error {
                throw .handshakeFailed("the scale refused notifications (\(failure)); switch it off and on and try again")
            }
            throw error.scaleError()
        } catch {
            throw .opening(error)
        }
        let session = VendorScaleConnection(device: device, link: connection, logic: logic, characteristics: found,
                                            notifications: notifications)
        let outcome = await session.waitUntilReady(clock: clock, deadline: handshakeDeadline)
        if case .failure(let error) = outcome {
            await session.disconnect()
            throw error
        }
        return session
    }
}

/// A connected vendor scale: the protocol value under a lock, fed every notification in order by
/// one pump task, which also performs the writes the protocol asks for, one at a time.
final class VendorScaleConnection<P: VendorScaleProtocol>: ScaleConnection {
    let device: DiscoveredDevice
    let events: AsyncStream<ScaleEvent>

    private let link: BLEConnection
    private let continuation: AsyncStream<ScaleEvent>.Continuation
    /// One result: `.success` at `.ready`, `.failure` when the exchange fails or the link ends first.
    private let readiness: AsyncStream<Result<Void, ScaleError>>
    private let readinessContinuation: AsyncStream<Result<Void, ScaleError>>.Continuation
    private struct State {
        var logic: P
        var finished = false
        var ready = false
        var pump: Task<Void, Never>?
    }
    private let state: Mutex<State>

    init(device: DiscoveredDevice, link: BLEConnection, logic: P, characteristics: [BluetoothUUID: GATTCharacteristic],
         notifications: NotificationValues<ATTNotification>) {
        self.device = device
        self.link = link
        (events, continuation) = AsyncStream.makeStream(of: ScaleEvent.self, bufferingPolicy: .bufferingNewest(256))
        (readiness, readinessContinuation) = AsyncStream.makeStream(of: Result<Void, ScaleError>.self, bufferingPolicy: .bufferingNewest(1))
        state = Mutex(State(logic: logic))
        var byHandle: [UInt16: BluetoothUUID] = [:]
        for (uuid, characteristic) in characteristics { byHandle[characteristic.valueHandle] = uuid }
        let handles = byHandle
        let pump = Task {
            let opening = self.state.withLock { $0.logic.start() }
            var going = await self.perform(opening, characteristics: characteristics)
            if going {
                for await notification in notifications {
                    guard let uuid = handles[notification.handle] else { continue }
                    let actions = self.state.withLock { $0.logic.received(notification.value, from: uuid) }
                    going = await self.perform(actions, characteristics: characteristics)
                    if !going { break }
                }
            }
            if self.link.disconnectReason == nil { await self.link.disconnect() }
            self.finish(self.link.disconnectReason ?? .localHostTerminated)
        }
        state.withLock { $0.pump = pump }
    }

    /// Carries out `actions` in order; false when the session must end.
    private func perform(_ actions: [VendorScaleAction], characteristics: [BluetoothUUID: GATTCharacteristic]) async -> Bool {
        for action in actions {
            switch action {
            case .write(let uuid, let value, let withResponse, let purpose):
                guard let characteristic = characteristics[uuid] else {
                    resolve(.failure(.unsupported("characteristic \(uuid) for \(purpose)")))
                    return false
                }
                do {
                    if withResponse {
                        try await link.gatt.write(characteristic.valueHandle, value)
                    } else {
                        try await link.gatt.writeWithoutResponse(characteristic.valueHandle, value)
                    }
                } catch .att(let failure) {
                    resolve(.failure(.handshakeFailed("the scale refused \(purpose) (\(failure)); switch it off and on and try again")))
                    return false
                } catch {
                    resolve(.failure(error.scaleError()))
                    return false
                }
            case .reading(let reading):
                state.withLock { state in
                    guard !state.finished else { return }
                    continuation.yield(.weight(reading))
                }
            case .ready:
                resolve(.success(()))
            case .fail(let error):
                resolve(.failure(error))
                return false
            }
        }
        return true
    }

    private func resolve(_ result: Result<Void, ScaleError>) {
        let first = state.withLock { state -> Bool in
            guard !state.ready else { return false }
            state.ready = true
            return true
        }
        if first {
            readinessContinuation.yield(result)
            readinessContinuation.finish()
        }
    }

    /// The opening exchange's outcome, or a timeout naming what it waited for.
    func waitUntilReady(clock: any Clock<Duration>, deadline: Duration) async -> Result<Void, ScaleError> {
        await race(clock: clock, deadline: deadline)
    }

    private func race<C: Clock<Duration>>(clock: C, deadline: Duration) async -> Result<Void, ScaleError> {
        let readiness = readiness
        let awaiting = state.withLock { $0.logic.awaiting }
        let disconnectReason: @Sendable () -> DisconnectReason? = { [link] in link.disconnectReason }
        return await withTaskGroup(of: Result<Void, ScaleError>?.self) { group in
            group.addTask {
                for await result in readiness { return result }
                // Finished without a result: the link ended before the exchange did.
                return Task.isCancelled ? nil : .failure(.disconnected(disconnectReason() ?? .localHostTerminated))
            }
            group.addTask {
                do { try await clock.sleep(for: deadline) } catch { return nil }
                return .failure(.handshakeFailed("no answer within \(VendorScaleSession.seconds(deadline)) while waiting for \(awaiting); "
                                                 + "wake the scale by stepping on it and try again"))
            }
            return await group.firstAnswer(orElse: .failure(.handshakeFailed("cancelled while waiting for \(awaiting)")))
        }
    }

    private func finish(_ reason: DisconnectReason) {
        resolve(.failure(.disconnected(reason)))
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            continuation.yield(.disconnected(reason))
            continuation.finish()
        }
    }

    func readInfo() async throws(ScaleError) -> MirrorInfo { throw .unsupported("device information on \(device.name ?? "this scale")") }
    func send(_ command: MirrorCommand) async throws(ScaleError) { throw .unsupported("\(command.name) on a scale") }
    func readResult() async throws(ScaleError) -> ScanResult { throw .unsupported("scan results on a scale") }

    func disconnect() async {
        await link.disconnect()
        state.withLock { $0.pump }?.cancel()
        finish(link.disconnectReason ?? .localHostTerminated)
    }
}
