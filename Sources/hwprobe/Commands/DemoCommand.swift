import HAL

/// `hwprobe demo`: the simulated bench. For now it shows what the bench holds and which driver
/// claims each device; the flows join it as they are built.
struct DemoCommand: Sendable {
    var console: Console
    var bench: SimulatedBench
    var registry: DriverRegistry

    func run(_ invocation: Invocation) async -> Int32 {
        console.out("Simulated bench (sim:)\n")
        let command = ListCommand(registry: registry, transports: TransportFactory(bench: bench))
        let devices = (try? await Discovery.collect(bench.transport.discover(), for: .seconds(1), clock: bench.clock)) ?? []
        for device in devices {
            let p = command.peripheral(device, hci: "sim:")
            let claim = registry.claim(.advertisement(device.advertisement))
            console.out("  \(p.address)  \(p.name ?? "(no name)")  \(p.rssi) dBm  → \(claim?.reason ?? "no driver")\n")
        }
        console.out("  sim:camera  Simulated camera  GREY 640x480\n  log:  cues printed to the terminal\n")
        return ExitCode.success
    }
}
