import HAL
import Transports

/// Finds the device a `DeviceLocation` names (`usb:045e:028e@1-2.3`, `v4l2:?serial=…`,
/// `hci:AA:BB:CC:DD:EE:FF`) among what is attached now, and gives the URI of its node or index
/// to open. It looks among exactly the devices `list` shows, with the same identities, so every
/// `id` that `list` or `watch` printed finds its device (`DeviceIdentityChoice`).
struct DeviceLocator: Sendable {
    var registry: DriverRegistry
    var sources: ListSources

    static var live: DeviceLocator { DeviceLocator(registry: DriverRegistry.linked, sources: ListSources()) }

    func resolve(_ location: DeviceLocation) throws(CLIFailure) -> DeviceURI {
        let report = ListCommand.localDevices(registry: registry, sources: sources)
        var found: [(uri: String, open: DeviceURI?)] = []
        var section: ListReport.Problem.Section
        switch location.kind {
        case .hci:
            section = .controllers
            for controller in report.controllers {
                guard case .address(let wanted) = location.key, let text = controller.address,
                      BLEAddress(string: text)?.bytes == wanted.bytes else { continue }
                found.append((controller.uri, try? DeviceURI(parsing: controller.uri)))
            }
        case .v4l2:
            section = .cameras
            for camera in report.cameras where location.matches(DeviceIdentity(usbPort: camera.usbPort, serial: camera.serial, busInfo: camera.busInfo)) {
                found.append((camera.uri, try? DeviceURI(parsing: camera.uri)))
            }
        case .usb, .hidraw, .evdev:
            section = .hapticDevices
            let scheme = location.kind.rawValue + ":"
            for pad in report.hapticDevices where pad.uri.hasPrefix(scheme) {
                if let ids = location.usb, !pad.uri.hasPrefix("usb:\(ids)") { continue }
                guard location.matches(DeviceIdentity(usbPort: pad.usbPort, serial: pad.serial)) else { continue }
                found.append((pad.uri, try? DeviceURI(parsing: pad.uri)))
            }
        case .uart:
            section = .serialPorts
            for port in report.serialPorts where location.matches(DeviceIdentity(usbPort: port.usbPort, serial: port.serial)) {
                found.append(("uart:" + port.path, .uart(path: port.path, baud: location.baud, rtscts: location.rtscts)))
            }
        }
        if found.count > 1 {
            throw CLIFailure(kind: .usage, message: "\(found.count) devices match \(location) (\(found.map(\.uri).joined(separator: ", "))): "
                             + "name one by its node, or by another part of its identity (hwprobe list --json shows each device's id)")
        }
        guard let only = found.first, let uri = only.open else {
            let why = report.problems.filter { $0.section == section }.map(\.message)
            throw CLIFailure(kind: .device, message: "no \(location.spoken) is attached (\(location))"
                             + (why.isEmpty ? "" : "; " + why.joined(separator: "; "))
                             + ": `hwprobe list` shows what is, each with its id")
        }
        return uri
    }

    /// The `id` list gives the device a run used (by the URI it was opened with), for reports;
    /// nil when it is not among the local devices (a simulated bench, a file, a cassette).
    func identity(of uri: DeviceURI) -> String? {
        let text = uri.description
        let report = ListCommand.localDevices(registry: registry, sources: sources)
        if let c = report.controllers.first(where: { $0.uri == text }) { return c.id }
        if let c = report.cameras.first(where: { $0.uri == text }) { return c.id }
        if let p = report.hapticDevices.first(where: { $0.uri == text || text.hasPrefix($0.uri + "@") }) { return p.id }
        if case .uart(let path, _, _) = uri, let s = report.serialPorts.first(where: { $0.path == path }) { return s.id }
        return nil
    }
}
