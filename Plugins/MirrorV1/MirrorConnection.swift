import HAL
import Synchronization
import Transports

/// A mirror over GATT: its notifications become HAL events in the order they arrived, its
/// characteristics take HAL commands, and its ATT errors 0x80–0x82 become typed refusals.
final class MirrorConnection: ScaleConnection {
    let device: DiscoveredDevice
    let events: AsyncStream<ScaleEvent>
    private let link: BLEConnection
    private let characteristics: [BluetoothUUID: GATTCharacteristic]
    private let pump: Mutex<Task<Void, Never>?>

    /// Subscribes to scanState, scale and alignment before anything is written (the profile asks
    /// it), then reports their current values so the flow starts from the mirror's real state.
    static func open(_ link: BLEConnection, device: DiscoveredDevice) async throws(ScaleError) -> MirrorConnection {
        do {
            _ = try? await link.bearer.exchangeMTU(247)
            guard let service = try await link.gatt.primaryServices(uuid: MirrorV1Driver.service).first else {
                throw ScaleError.unsupported("the body-scan mirror service is missing")
            }
            var found: [BluetoothUUID: GATTCharacteristic] = [:]
            for characteristic in try await link.gatt.characteristics(of: service) { found[characteristic.uuid] = characteristic }
            for uuid in [MirrorValues.deviceInfo, MirrorValues.initialize, MirrorValues.scanToken, MirrorValues.scanState,
                         MirrorValues.scale, MirrorValues.alignment, MirrorValues.control, MirrorValues.result] where found[uuid] == nil {
                throw ScaleError.unsupported("the mirror lacks characteristic \(uuid)")
            }
            let notifications = link.bearer.notifications()
            let connection = MirrorConnection(device: device, link: link, characteristics: found, notifications: notifications)
            for uuid in [MirrorValues.scanState, MirrorValues.scale, MirrorValues.alignment] {
                if let characteristic = found[uuid] { try await link.gatt.enableNotifications(characteristic) }
            }
            try await connection.reportCurrentValues()
            return connection
        } catch {
            throw .opening(error)
        }
    }

    private let continuation: AsyncStream<ScaleEvent>.Continuation

    private init(device: DiscoveredDevice, link: BLEConnection, characteristics: [BluetoothUUID: GATTCharacteristic],
                 notifications: NotificationValues<ATTNotification>) {
        self.device = device
        self.link = link
        self.characteristics = characteristics
        let (stream, continuation) = AsyncStream.makeStream(of: ScaleEvent.self, bufferingPolicy: .unbounded)
        events = stream
        self.continuation = continuation
        let handles = Dictionary(uniqueKeysWithValues: characteristics.values.map { ($0.valueHandle, $0.uuid) })
        let disconnection = link.disconnection()
        pump = Mutex(Task {
            for await notification in notifications {
                if let event = Self.event(handles[notification.handle], notification.value) { continuation.yield(event) }
            }
            // The bearer ends with the link: say why, once, and end the events.
            for await reason in disconnection {
                continuation.yield(.disconnected(reason))
                break
            }
            continuation.finish()
        })
    }

    static func event(_ uuid: BluetoothUUID?, _ value: [UInt8]) -> ScaleEvent? {
        switch uuid {
        case MirrorValues.scanState: MirrorValues.scanStatus(value).map { .scanState($0) }
        case MirrorValues.scale: MirrorValues.scaleStatus(value).map { .scale($0) }
        case MirrorValues.alignment: MirrorValues.alignment(value).map { .alignment($0) }
        default: nil
        }
    }

    private func reportCurrentValues() async throws(BLEError) {
        for uuid in [MirrorValues.scale, MirrorValues.alignment, MirrorValues.scanState] {
            guard let characteristic = characteristics[uuid] else { continue }
            if let event = Self.event(uuid, try await link.gatt.read(characteristic.valueHandle)) { continuation.yield(event) }
        }
    }

    func readInfo() async throws(ScaleError) -> MirrorInfo {
        guard let characteristic = characteristics[MirrorValues.deviceInfo] else { throw .unsupported("deviceInfo") }
        let bytes: [UInt8]
        do { bytes = try await link.gatt.read(characteristic.valueHandle) } catch { throw error.scaleError() }
        guard let info = MirrorValues.info(bytes) else { throw .protocolViolation("deviceInfo of \(bytes.count) bytes") }
        return info
    }

    func send(_ command: MirrorCommand) async throws(ScaleError) {
        let (uuid, value) = MirrorValues.write(command)
        guard let characteristic = characteristics[uuid] else { throw .unsupported(command.name) }
        do { try await link.gatt.write(characteristic.valueHandle, value) } catch { throw error.scaleError(for: command, refusal: MirrorValues.refusal) }
    }

    func readResult() async throws(ScaleError) -> ScanResult {
        guard let characteristic = characteristics[MirrorValues.result] else { throw .unsupported("result") }
        let bytes: [UInt8]
        do { bytes = try await link.gatt.read(characteristic.valueHandle) } catch { throw error.scaleError(for: .startScan, refusal: MirrorValues.refusal) }
        guard let result = MirrorValues.result(bytes) else { throw .protocolViolation("result of \(bytes.count) bytes") }
        return result
    }

    func disconnect() async {
        await link.disconnect()
    }
}
