import Flows
import HAL
import HALFakes
import Transports
import Peripherals
import VirtualController

/// The built-in bench (`sim:`): a mirror and a weighing scale (standard, or the family
/// `sim:?scale=ID` names) around an in-process virtual controller, a camera and a haptic log, so
/// hwprobe can be tried and tested with no hardware attached. `--hci sim:` runs our own host
/// stack over that controller, so every command takes the real path from the drivers down to HCI.
struct SimulatedBench: Sendable {
    let clock: any Clock<Duration>
    /// The mirror's script with the scenario's fault applied; `MirrorSimulation` plays it.
    let mirrorScript: MirrorScript
    let scale: FakeScale

    let scenario: SimulatedScenario

    init(clock: any Clock<Duration> = ContinuousClock(), mirrorScript: MirrorScript = MirrorScript(),
         scenario: SimulatedScenario = SimulatedScenario()) {
        self.clock = clock
        self.scenario = scenario
        var script = mirrorScript
        if let fault = scenario.fault { script.fault = fault }
        self.mirrorScript = script
        let scaleDevice = DiscoveredDevice(
            address: BLEAddress(bytes: [0xD4, 0x12, 0x3A, 0x00, 0x18, 0x1D], kind: .public)!, rssi: -61,
            advertisement: Advertisement(flags: 0x06, localName: "Bench Scale", serviceUUIDs: [BluetoothUUID(0x181D)]))
        scale = FakeScale(device: scaleDevice, steps: [
            .init(after: .milliseconds(300), reading: WeightReading(kilograms: 71.9, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: Self.weightKilograms, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: Self.weightKilograms, stable: true)),
        ])
    }

    /// The bench camera's view: the codes of a backup made with the demo's password, out of order,
    /// with a repeat and a stray code. Made when asked for (it costs one key derivation).
    var backupCodes: FakeCodeSource { backupCodes(reconnected: false) }

    /// The same, or, once the person has carried on after the camera stopped (`reconnected`), what
    /// the camera shows when plugged back in: a `short` camera then shows every code (its fault
    /// struck once, like the mirror's), the others show what they showed before.
    func backupCodes(reconnected: Bool) -> FakeCodeSource {
        let codes = Self.demoBackupCodes ?? []
        let texts: [String]
        var batches: [[DecodedSymbol]]?
        switch scenario.backup {
        case .complete:
            texts = codes.count == 4 ? [codes[2], codes[0], codes[0], "https://example.com/not-a-backup", codes[3], codes[1]] : []
        case .damaged:
            // Code 2 of 4 again, with other bytes (a code of another print of the backup, say);
            // then the whole set a few times over, so that starting over can succeed.
            let forged = (try? VB1Code(parsing: codes.count == 4 ? codes[1] : "")).flatMap {
                try? VB1Code(id: $0.id, index: $0.index, count: $0.count, data: $0.data.map { $0 ^ 0x5A }).text
            }
            texts = codes.count == 4 ? [codes[0], codes[1], forged ?? ""] + Array([[String]](repeating: codes, count: 6).joined()) : []
        case .slow:
            texts = Self.slowBackupCodes ?? []
        case .short:
            texts = codes.count == 4 ? (reconnected ? [codes[3], codes[2], codes[1], codes[0]] : [codes[2], codes[0]]) : []
        case .none:
            texts = []
            batches = Array(repeating: [], count: 100_000)
        }
        if let batches { return FakeCodeSource(batches: batches, interval: .milliseconds(700), clock: clock) }
        return FakeCodeSource(texts: texts, interval: .milliseconds(700), clock: clock)
    }

    /// The bench as a `sim:` URI asks for it: the same clock and mirror, the scenario its options name.
    func configured(for uri: DeviceURI) throws(CLIFailure) -> SimulatedBench {
        guard case .sim(let options) = uri, !options.isEmpty else { return self }
        return SimulatedBench(clock: clock, mirrorScript: mirrorScript, scenario: try SimulatedScenario(options: options))
    }

    /// The bench's radio, fresh for each command: the mirror (first heard 150 ms after power-up)
    /// and the scale (250 ms), advertising every 100 ms until a central connects.
    func controller() -> VirtualController {
        VirtualController(peripherals: [MirrorPeripheral(script: mirrorScript, deviations: scenario.deviations), scalePeripheral()], clock: clock)
    }

    /// The standard scale the bench has always had, or the family `scale=` names (`weight=`
    /// sets the person's weight), at the same address and first heard at the same moment. A
    /// family that reports body composition reports the bench person's; a broadcasting one has
    /// its person on it from power-up, a connected one from the moment a central is ready.
    func scalePeripheral() -> any VirtualPeripheral {
        guard scenario.scale != nil || scenario.weightKilograms != nil else { return StandardScalePeripheral(scale: scale) }
        let family = scenario.scale ?? StandardScaleDevice.driverID
        return ScalePeripherals.make(driverID: family, weightKilograms: scenario.weightKilograms ?? Self.weightKilograms,
                                     address: scale.device.address, composition: .bench, rssi: scale.device.rssi)
            ?? StandardScalePeripheral(scale: scale)
    }

    /// The bench person's weight.
    static let weightKilograms = 72.35

    /// The bind key of the bench's S400 (`sim:?scale=mi-s400`), as `--bind-key` takes it: a
    /// demonstration, like the bench backup's password.
    static let s400BindKey = MiS400BroadcastDevice.demoBindKeyHex

    /// Our host stack over the bench's controller, on the bench's clock.
    func central(uri: DeviceURI = .simulatedBench, snoopPath: String? = nil, events: HostEventHandler? = nil,
                 tap: (any HCIPacketTap)? = nil) async throws(BLEError) -> BLECentral {
        try await BLECentral.open(stream: controller(), uri: uri, snoopPath: snoopPath, clock: clock, events: events, tap: tap)
    }

    /// The demo backup made with a costly derivation (64 MiB, p = 16: seconds, not a tenth of
    /// one), so there is time to cancel while it runs. Made when first asked for.
    static let slowBackupCodes: [String]? = {
        guard let container = try? VB1Container.write(plaintext: Array(DemoCommand.sampleVault.utf8), password: DemoCommand.password,
                                                      parameters: ScryptParameters(logN: 16, r: 8, p: 16)),
              let codes = try? VB1Code.split(container: container.bytes, into: 4) else { return nil }
        return codes.map(\.text)
    }()

    static let demoBackupCodes: [String]? = {
        guard let container = try? VB1Container.write(plaintext: Array(DemoCommand.sampleVault.utf8), password: DemoCommand.password,
                                                      parameters: ScryptParameters(logN: 15, r: 8, p: 1)),
              let codes = try? VB1Code.split(container: container.bytes, into: 4) else { return nil }
        return codes.map(\.text)
    }()
}
