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

    var transport: FakeScaleTransport {
        let scale = scale
        let clock = clock
        return FakeScaleTransport(peripherals: [
            .mirror(mirror, appearsAfter: .milliseconds(150)),
            .init(device: scale.device, appearsAfter: .milliseconds(250)) { scale.connect(clock: clock) },
        ], clock: clock)
    }
}
