/// One hotplug event as the kernel (or udev) announces it over `NETLINK_KOBJECT_UEVENT`: what
/// happened (`add`, `remove`, `change`, `bind`, …) to which device, in which subsystem.
///
/// Two encodings reach such a socket (both parsed here, sans-IO):
/// - the kernel's: `ACTION@DEVPATH` then `KEY=VALUE` strings, each NUL-terminated
///   (lib/kobject_uevent.c);
/// - libudev's, which udev and umockdev send: the 8 bytes `libudev\0`, a header in which a
///   big-endian magic `0xFEEDCAFE` is followed by the header's size and the properties' offset
///   and length (native byte order, 32 bits each), then the same `KEY=VALUE` strings.
/// Anything else, or a header whose sizes point outside the message, is not an event (nil).
package struct UEvent: Hashable, Sendable {
    package var action: String
    package var devicePath: String
    package var subsystem: String?
    /// The node under /dev, as the event names it (`video0`, `input/event5`), when it has one.
    package var deviceName: String?
    package var properties: [String: String]

    /// The most a message may be (the kernel's UEVENT_BUFFER_SIZE is 2048; udev's can be longer).
    package static let maximumSize = 16 * 1024

    package static func parse(_ bytes: [UInt8]) -> UEvent? {
        guard bytes.count <= maximumSize, !bytes.isEmpty else { return nil }
        let body: ArraySlice<UInt8>
        if bytes.starts(with: Array("libudev".utf8) + [0]) {
            // Magic, header size, properties offset, properties length: 4 bytes each from byte 8.
            guard bytes.count >= 24, Array(bytes[8..<12]) == [0xFE, 0xED, 0xCA, 0xFE] else { return nil }
            func native(_ at: Int) -> Int {
                Int(UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24)
            }
            let offset = native(16), length = native(20)
            guard offset >= 24, length >= 0, offset <= bytes.count, length <= bytes.count - offset else { return nil }
            body = bytes[offset..<(offset + length)]
        } else {
            // The kernel's: the summary line first, which the properties repeat.
            guard let end = bytes.firstIndex(of: 0), bytes[..<end].contains(UInt8(ascii: "@")) else { return nil }
            body = bytes[(end + 1)...]
        }
        var properties: [String: String] = [:]
        for field in body.split(separator: 0) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: field[field.startIndex..<equals], as: UTF8.self)
            properties[key] = String(decoding: field[(equals + 1)...], as: UTF8.self)
        }
        guard let action = properties["ACTION"], let path = properties["DEVPATH"], !action.isEmpty else { return nil }
        return UEvent(action: action, devicePath: path, subsystem: properties["SUBSYSTEM"], deviceName: properties["DEVNAME"],
                      properties: properties)
    }
}
