import HAL
import Transports

/// What `gatt` prints: the database (docs/cli.md, "JSON" and "`gatt` values"), with names,
/// the values read, the writes made and the values a subscription received.
struct GattReport: Encodable, Equatable, Sendable {
    struct Descriptor: Encodable, Equatable, Sendable {
        var uuid: String
        var name: String?
        var handle: UInt16
    }

    struct Characteristic: Encodable, Equatable, Sendable {
        var uuid: String
        var name: String?
        var handle: UInt16
        var properties: [String]
        var descriptors: [Descriptor]
        /// What `--read` read: lower-case hex, no separators.
        var value: String?
        /// Under `--read all`, why the device refused to read it (`0x02 Read Not Permitted`).
        var error: String?
        /// The value as text when every byte is printable: for the text dump only.
        var printable: String?

        private enum CodingKeys: String, CodingKey {
            case uuid, name, handle, properties, descriptors, value, error
        }
    }

    struct Service: Encodable, Equatable, Sendable {
        var uuid: String
        var name: String?
        var start: UInt16
        var end: UInt16
        var characteristics: [Characteristic]
    }

    /// One `--write` or `--write-command`, in the order made.
    struct Write: Encodable, Equatable, Sendable {
        var uuid: String
        var name: String?
        var handle: UInt16
        var value: String
        var withResponse: Bool
    }

    struct Subscription: Encodable, Equatable, Sendable {
        struct Value: Encodable, Equatable, Sendable {
            /// Seconds since the subscription was enabled, to the microsecond.
            var t: Double
            var value: String
        }
        var uuid: String
        var name: String?
        var handle: UInt16
        /// Every value that arrived, kept or not.
        var received: Int
        var values: [Value]
        /// Present (true) when more arrived than were kept (see `SubscriptionRecord`).
        var truncated: Bool?
        /// Present when values came faster than hwprobe took them in and some were let go.
        var dropped: Int?
    }

    /// The report as JSON with the subscription's values written straight from the packed
    /// record, a thousand at a time: encoded as values of their own, 100,000 of them cost about
    /// 3 KB each while the encoder held its tree (issue 27, item 14). The same JSON as
    /// `JSON.encode` would give: the encoder lays out the rest around one placeholder value,
    /// whose object is replaced by the values in the same layout.
    static func writeJSON(_ report: GattReport, values record: SubscriptionRecord, to write: (String) -> Void) {
        guard record.keptCount > 0 else { return write(JSON.encode(report)) }
        let placeholder = "hwprobe-subscription-values"
        var shell = report
        shell.subscription?.values = [.init(t: 0, value: placeholder)]
        let text = JSON.encode(shell)
        guard let mark = text.range(of: "\"" + placeholder + "\""),
              let open = text[..<mark.lowerBound].lastIndex(of: "{"),
              let close = text[mark.upperBound...].firstIndex(of: "}") else { return write(JSON.encode(report)) }
        let lineStart = text[..<open].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
        let indent = String(text[lineStart..<open])
        write(String(text[..<lineStart]))
        var chunk = ""
        for index in 0..<record.keptCount {
            let (t, hex) = record.jsonFields(index)
            chunk += indent + "{\n" + indent + "  \"t\" : " + t + ",\n" + indent + "  \"value\" : \"" + hex + "\"\n" + indent + "}"
            chunk += index == record.keptCount - 1 ? "" : ",\n"
            if chunk.utf8.count > 64 * 1024 {
                write(chunk)
                chunk = ""
            }
        }
        write(chunk + String(text[text.index(after: close)...]))
    }

    var address: String
    var mtu: UInt16
    var services: [Service]
    var writes: [Write]?
    var subscription: Subscription?

    /// What a read gave: the value, or the ATT error code a `--read all` carried on past.
    enum ReadResult: Equatable, Sendable {
        case value([UInt8])
        case refused(UInt8)
    }

    init(address: BLEAddress, mtu: UInt16, trees: [GATTServiceTree], reads: [UInt16: ReadResult] = [:]) {
        self.address = address.description
        self.mtu = mtu
        services = trees.map { tree in
            Service(uuid: tree.service.uuid.description, name: BluetoothNames.bench.name(of: tree.service.uuid),
                    start: tree.service.start, end: tree.service.end,
                    characteristics: tree.characteristics.map { c in
                        var entry = Characteristic(uuid: c.uuid.description, name: BluetoothNames.bench.name(of: c.uuid), handle: c.valueHandle,
                                                   properties: c.properties.names,
                                                   descriptors: c.descriptors.map {
                                                       .init(uuid: $0.uuid.description, name: BluetoothNames.bench.name(of: $0.uuid), handle: $0.handle)
                                                   })
                        switch reads[c.valueHandle] {
                        case .value(let bytes):
                            entry.value = HexValue.text(bytes)
                            entry.printable = GattText.printable(bytes)
                        case .refused(let code): entry.error = GattText.attError(code, of: c.uuid)
                        case nil: break
                        }
                        return entry
                    })
        }
    }

    /// The dump as text: one line per service, characteristic and descriptor, with names, and a
    /// line under each characteristic that was read.
    var text: String {
        var lines = ["\(address)  MTU \(mtu)"]
        for service in services {
            lines.append("service \(Self.spelled(service.uuid, service.name))  handles \(service.start)–\(service.end)")
            for c in service.characteristics {
                let properties = c.properties.isEmpty ? "no properties" : c.properties.joined(separator: ",")
                lines.append("  characteristic \(Self.spelled(c.uuid, c.name))  handle \(c.handle)  \(properties)")
                if let value = c.value {
                    lines.append("    value " + (value.isEmpty ? "(empty)" : value) + (c.printable.map { "  \"\($0)\"" } ?? ""))
                }
                if let error = c.error { lines.append("    read refused: ATT error \(error)") }
                for d in c.descriptors { lines.append("    descriptor \(Self.spelled(d.uuid, d.name))  handle \(d.handle)") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A write as the text output says it, once it is done.
    static func text(_ write: Write) -> String {
        let what = write.withResponse ? "wrote" : "sent (Write Command)"
        return "\(what) \(write.value) to \(spelled(write.uuid, write.name)), handle \(write.handle)\n"
    }

    private static func spelled(_ uuid: String, _ name: String?) -> String {
        name.map { "\(uuid) \($0)" } ?? uuid
    }
}
