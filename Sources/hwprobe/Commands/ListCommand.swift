import Capture
import HAL
import Transports

/// Where `list` looks. Live by default; tests put fixed answers in place of the machine's.
struct ListSources: Sendable {
    var controllers: @Sendable () throws(HCIAccessError) -> [HCIControllerInfo] = { () throws(HCIAccessError) in
        try HCIControllerProbe.controllers()
    }
    var cameras: @Sendable () throws(CameraError) -> V4L2Probe.Report = { () throws(CameraError) in try V4L2Probe().probe() }
    var usb: @Sendable (Set<USBIdentity>) throws(USBAccessError) -> [USBDeviceInfo] = { (ids) throws(USBAccessError) in
        try USBProbe.devices(opening: ids)
    }
    var evdev: @Sendable () throws(InputAccessError) -> (devices: [EvdevDeviceInfo], problems: [String]) = { () throws(InputAccessError) in
        try InputProbe().evdevDevices()
    }
    var hidraw: @Sendable () -> (devices: [HidrawDeviceInfo], problems: [String]) = { InputProbe().hidrawDevices() }
    var serialPorts: @Sendable () -> [String] = { SerialPortProbe().ports() }
    /// What survives a replug of the device behind a node (`/dev/video0`), and of the USB device
    /// at a bus and address: sysfs, read without opening anything.
    var nodeIdentity: @Sendable (String) -> DeviceIdentity = { SysfsIdentity().identity(ofNode: $0) }
    var usbIdentity: @Sendable (_ bus: Int, _ address: Int) -> DeviceIdentity = { SysfsIdentity().identity(ofUSBBus: $0, address: $1) }
}

/// `hwprobe list`: what is attached, each section on its own, so one missing kernel feature
/// never hides the rest.
struct ListCommand: Sendable {
    var registry: DriverRegistry
    var sources = ListSources()
    var transports: TransportFactory
    var snoopPath: String?
    /// What is being waited for (`scanning sim: for peripherals: 2 s left`), nil when nothing is:
    /// a scan of several seconds per controller would otherwise look like a hang.
    var status: @Sendable (String?) -> Void = { _ in }
    /// Whether the status is rewritten in place (a terminal), so the seconds left can tick.
    var statusTicks = false

    func report(hciURIs: [DeviceURI], scanFor duration: Duration) async -> ListReport {
        var report = Self.localDevices(registry: registry, sources: sources)
        // One capture file is one controller's traffic, and a capture never overwrites another:
        // with several controllers the first is captured, and the list says so.
        for (index, uri) in hciURIs.enumerated() {
            await scan(uri, for: duration, snoopPath: index == 0 ? snoopPath : nil, record: index == 0, into: &report)
        }
        if transports.recorder != nil, let first = hciURIs.first, hciURIs.count > 1 {
            report.problem(.peripherals, "--record holds \(first)'s peripherals only: run once per controller to record the others")
        }
        if let snoopPath, let first = hciURIs.first, hciURIs.count > 1 {
            report.problem(.peripherals, "--btsnoop \(snoopPath) holds \(first)'s traffic only: run once per controller to capture the others")
        }
        return report
    }

    /// The sections that need no scan (controllers, cameras, haptic devices, serial ports), each
    /// device with its `id`: what `watch` looks at again after a hotplug event, and where a
    /// URI naming a device by its identity is looked up (`DeviceLocator`).
    static func localDevices(registry: DriverRegistry, sources: ListSources) -> ListReport {
        var report = ListReport()
        do {
            report.controllers = try sources.controllers().map {
                ListReport.Controller(uri: $0.uri, name: $0.name, address: $0.address?.description)
            }
        } catch {
            report.problem(.controllers, error.description)
        }
        do {
            let found = try sources.cameras()
            report.cameras = found.cameras.map { info in
                var camera = Self.camera(info)
                let behind = sources.nodeIdentity(String(info.uri.dropFirst("v4l2:".count)))
                camera.usbPort = behind.usbPort ?? info.identity.usbPort
                camera.serial = behind.serial ?? info.identity.serial
                return camera
            }
            for problem in found.problems { report.problem(.cameras, problem) }
        } catch {
            report.problem(.cameras, error.description)
        }
        collectHapticDevices(into: &report, registry: registry, sources: sources)
        report.serialPorts = sources.serialPorts().map { path in
            let behind = sources.nodeIdentity(path)
            return ListReport.SerialPort(path: path, usbPort: behind.usbPort, serial: behind.serial)
        }
        DeviceIdentityChoice.assign(&report)
        return report
    }

    static func camera(_ info: CameraInfo) -> ListReport.Camera {
        ListReport.Camera(uri: info.uri, card: info.card, driver: info.driver,
                          formats: info.formats.map { .init(fourcc: $0.fourcc, sizes: $0.sizes.map(\.description)) },
                          busInfo: info.identity.busInfo, usbPort: info.identity.usbPort, serial: info.identity.serial)
    }

    private static func collectHapticDevices(into report: inout ListReport, registry: DriverRegistry, sources: ListSources) {
        do {
            // In bus and address order, whatever order libusb enumerates in: the same pads list the same way.
            let devices = try sources.usb(Set(registry.usbIdentities)).sorted { ($0.bus, $0.address) < ($1.bus, $1.address) }
            for device in devices {
                guard let claim = registry.claim(.usb(device.identity)) else { continue }
                let twins = devices.filter { $0.identity == device.identity }.count
                let behind = sources.usbIdentity(device.bus, device.address)
                report.hapticDevices.append(.init(uri: twins > 1 ? device.uri : "usb:\(device.identity)",
                                                  name: device.product ?? claim.descriptor.name, driver: claim.descriptor.id,
                                                  usbPort: behind.usbPort, serial: behind.serial))
            }
        } catch {
            report.problem(.hapticDevices, error.description)
        }
        let hidraw = sources.hidraw()
        for device in hidraw.devices {
            guard let claim = registry.claim(.hidraw(path: device.path, identity: device.identity)) else { continue }
            let behind = sources.nodeIdentity(device.path)
            report.hapticDevices.append(.init(uri: device.uri, name: device.name, driver: claim.descriptor.id,
                                              usbPort: behind.usbPort, serial: behind.serial))
        }
        for problem in hidraw.problems { report.problem(.hapticDevices, problem) }
        do {
            let evdev = try sources.evdev()
            for device in evdev.devices {
                guard let claim = registry.claim(.evdev(path: device.path, capabilities: device.capabilities)) else { continue }
                let behind = sources.nodeIdentity(device.path)
                report.hapticDevices.append(.init(uri: device.uri, name: device.name, driver: claim.descriptor.id,
                                                  usbPort: behind.usbPort, serial: behind.serial))
            }
            for problem in evdev.problems { report.problem(.hapticDevices, problem) }
        } catch {
            report.problem(.hapticDevices, error.description)
        }
    }

    private func scan(_ uri: DeviceURI, for duration: Duration, snoopPath: String?, record: Bool, into report: inout ListReport) async {
        let status = status
        let ticks = statusTicks
        let clock = transports.clock(for: uri)
        // The countdown only shows the time left; the scan keeps its own deadline and ends the wait.
        let countdown = Locked<Task<Void, Never>?>(nil)
        if !uri.isSimulated { status("opening \(uri)…") }
        let scanning: @Sendable () -> Void = {
            let task = Task {
                _ = await Countdown.run(duration, on: clock, ticking: ticks) { left in status("scanning \(uri) for peripherals: \(left) s left") }
            }
            countdown.withLock { $0 = task }
        }
        do {
            let found = try await transports.discover(on: uri, for: duration, snoopPath: snoopPath, record: record, scanning: scanning)
            for device in found {
                report.peripherals.append(peripheral(device, hci: uri.description))
            }
            if found.count >= Discovery.maximumPeripherals {
                report.problem(.peripherals, "\(uri): \(Discovery.maximumPeripherals) peripherals or more advertised (a flood?); "
                               + "the first \(Discovery.maximumPeripherals) are listed")
            }
        } catch {
            report.problem(.peripherals, "\(uri): \(error.message)")
        }
        // Waited for, so a tick that was already under way cannot bring the status back.
        let ticking = countdown.withLock { task -> Task<Void, Never>? in
            task?.cancel()
            return task
        }
        await ticking?.value
        status(nil)
    }

    func peripheral(_ device: DiscoveredDevice, hci: String) -> ListReport.Peripheral {
        let claim = registry.claim(.advertisement(device.advertisement))
        var weight: Double?
        var note: String?
        if let broadcast = claim?.driver as? any BroadcastScaleDriver {
            do throws(BroadcastReadingError) { weight = try broadcast.reading(from: device.advertisement, sentBy: device.address)?.kilograms } catch { note = error.description }
        }
        // Unclaimed but scale-like: say so, and what it resembles (issue 18).
        let likeness = claim == nil ? ScaleResemblance.likeness(of: .advertisement(device.advertisement)) : nil
        return ListReport.Peripheral(hci: hci, address: device.address.description, name: device.name,
                                     rssi: Int(device.rssi),
                                     services: device.advertisement.allServiceUUIDs.map(\.description),
                                     driver: claim?.descriptor.id,
                                     kind: claim?.descriptor.kind.rawValue ?? (likeness != nil ? DeviceKind.scale.rawValue : nil),
                                     weightKg: weight,
                                     addressType: device.address.kind.rawValue, reason: claim?.reason, hint: likeness?.hint, note: note,
                                     resolvedFrom: device.resolvedFrom?.description)
    }
}

enum Discovery {
    /// The most peripherals one scan lists: a crowded hall has dozens; more is a flood.
    static let maximumPeripherals = 1000

    /// Everything discovered within `duration`, one entry per address with advertisements merged,
    /// in the order first seen (at most `maximumPeripherals`; `overflow` says how many more there were).
    static func collect(_ stream: AsyncThrowingStream<DiscoveredDevice, any Error>, for duration: Duration,
                        clock: any Clock<Duration>, overflow: (@Sendable (Int) -> Void)? = nil) async throws -> [DiscoveredDevice] {
        try await withThrowingTaskGroup(of: [DiscoveredDevice]?.self) { group in
            group.addTask {
                var seen = BoundedPeripheralMap<DiscoveredDevice>(capacity: maximumPeripherals, policy: .keepingFirst)
                do {
                    for try await device in stream {
                        if let old = seen[device.address] {
                            var merged = device
                            merged.advertisement = old.advertisement.merging(device.advertisement)
                            seen.set(merged, for: device.address)
                        } else {
                            seen.set(device, for: device.address)
                        }
                        try Task.checkCancellation()
                    }
                } catch is CancellationError {}
                if seen.overflow > 0 { overflow?(seen.overflow) }
                return seen.inOrder
            }
            group.addTask {
                try? await clock.sleep(for: duration)
                return nil
            }
            // Whichever finishes first: the deadline cancels the scan, which then hands over what it saw.
            var result: [DiscoveredDevice] = []
            while let next = try await group.next() {
                if let devices = next { result = devices; group.cancelAll() } else { group.cancelAll() }
            }
            return result
        }
    }
}
