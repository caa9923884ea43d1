import Flows
import HAL

/// The built-in bench (`sim:`): a mirror, a standard weighing scale, a camera and a haptic log,
/// all fakes from HAL, so hwprobe can be tried and tested with no hardware attached.
struct SimulatedBench: Sendable {
    let clock: any Clock<Duration>
    let mirror: FakeMirror
    let scale: FakeScale

    init(clock: any Clock<Duration> = ContinuousClock(), mirrorScript: MirrorScript = MirrorScript()) {
        self.clock = clock
        mirror = FakeMirror(script: mirrorScript, clock: clock)
        let scaleDevice = DiscoveredDevice(
            address: BLEAddress(bytes: [0xD4, 0x12, 0x3A, 0x00, 0x18, 0x1D], kind: .public)!, rssi: -61,
            advertisement: Advertisement(flags: 0x06, localName: "Bench Scale", serviceUUIDs: [BluetoothUUID(0x181D)]))
        scale = FakeScale(device: scaleDevice, steps: [
            .init(after: .milliseconds(300), reading: WeightReading(kilograms: 71.9, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: 72.35, stable: false)),
            .init(after: .milliseconds(400), reading: WeightReading(kilograms: 72.35, stable: true)),
        ])
    }

    /// The bench camera's view: the codes of a backup made with the demo's password, out of order,
    /// with a repeat and a stray code. Made when asked for (it costs one key derivation).
    var backupCodes: FakeCodeSource {
        let texts = Self.demoBackupCodes.map { codes in
            [codes[2], codes[0], codes[0]] + ["https://example.com/not-a-backup"] + Array(codes[3...]) + [codes[1]]
        } ?? []
        return FakeCodeSource(texts: texts, interval: .milliseconds(700), clock: clock)
    }

    static let demoBackupCodes: [String]? = {
        guard let container = try? VB1Container.write(plaintext: Array(DemoCommand.sampleVault.utf8), password: DemoCommand.password,
                                                      parameters: ScryptParameters(logN: 15, r: 8, p: 1)),
              let codes = try? VB1Code.split(container: container.bytes, into: 4) else { return nil }
        return codes.map(\.text)
    }()

    var transport: FakeScaleTransport {
        let scale = scale
        let clock = clock
        return FakeScaleTransport(peripherals: [
            .mirror(mirror, appearsAfter: .milliseconds(150)),
            .init(device: scale.device, appearsAfter: .milliseconds(250)) { scale.connect(clock: clock) },
        ], clock: clock)
    }
}
