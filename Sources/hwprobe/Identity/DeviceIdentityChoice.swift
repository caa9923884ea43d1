import HAL

/// Gives every local device in a `list` report its `id`: the most lasting URI that names it
/// alone among what is attached (issue 19, item 5). In order of preference:
/// 1. its serial number (`usb:045e:028e?serial=3B0A71C2`): survives moving it to another socket;
/// 2. its USB port (`v4l2:@1-2.3`): survives a replug into the same socket, and tells identical
///    devices without serial numbers apart;
/// 3. a camera's V4L2 bus info (`v4l2:@platform:vivid-000`);
/// 4. otherwise its node, as `uri` (nothing more lasting is known).
///
/// A form counts only when no other device of the same kind (and, for `usb:`, the same IDs)
/// has the same value: `DeviceLocator` looks a URI up among the very same devices, so an `id`
/// always finds exactly the device it was given to. Controllers are named by their address.
enum DeviceIdentityChoice {
    struct Candidate {
        /// The scheme and, for `usb:`, `VID:PID`: devices compete for a form only within it.
        var group: String
        var prefix: String
        var serial: String?
        var usbPort: String?
        var busInfo: String?
        var fallback: String
    }

    static func assign(_ report: inout ListReport) {
        let cameras = ids(report.cameras.map {
            Candidate(group: "v4l2", prefix: "v4l2:", serial: $0.serial, usbPort: $0.usbPort, busInfo: $0.busInfo, fallback: $0.uri)
        })
        for index in report.cameras.indices { report.cameras[index].id = cameras[index] }
        let pads = ids(report.hapticDevices.map { device in
            let scheme = String(device.uri.prefix { $0 != ":" })
            // usb:VID:PID[@BUS.ADDR]: the IDs are part of the form.
            let ids = scheme == "usb" ? String(device.uri.dropFirst(4).prefix { $0 != "@" }) : ""
            return Candidate(group: scheme + ":" + ids, prefix: scheme + ":" + ids, serial: device.serial,
                             usbPort: device.usbPort, busInfo: nil, fallback: device.uri)
        })
        for index in report.hapticDevices.indices { report.hapticDevices[index].id = pads[index] }
        let ports = ids(report.serialPorts.map {
            Candidate(group: "uart", prefix: "uart:", serial: $0.serial, usbPort: $0.usbPort, busInfo: nil, fallback: "uart:" + $0.path)
        })
        for index in report.serialPorts.indices { report.serialPorts[index].id = ports[index] }
        let addresses = report.controllers.compactMap(\.address)
        for index in report.controllers.indices {
            let controller = report.controllers[index]
            if let address = controller.address, addresses.filter({ $0 == address }).count == 1 {
                report.controllers[index].id = "hci:" + address
            } else {
                report.controllers[index].id = controller.uri
            }
        }
    }

    static func ids(_ candidates: [Candidate]) -> [String] {
        func unique(_ value: String?, _ key: KeyPath<Candidate, String?>, in group: String) -> Bool {
            guard let value else { return false }
            return candidates.filter { $0.group == group && $0[keyPath: key] == value }.count == 1
        }
        return candidates.map { c in
            if let serial = c.serial, unique(serial, \.serial, in: c.group) { return c.prefix + "?serial=" + serial }
            if let port = c.usbPort, unique(port, \.usbPort, in: c.group) { return c.prefix + "@" + port }
            if let bus = c.busInfo, unique(bus, \.busInfo, in: c.group) { return c.prefix + "@" + bus }
            return c.fallback
        }
    }
}
