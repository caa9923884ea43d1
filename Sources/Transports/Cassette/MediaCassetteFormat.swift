import HAL

extension CassetteFormat {
    /// The whole cassette as text: BLE peripherals by address, then cameras and pads by URI,
    /// then the `end` line.
    public static func text(of cassette: Cassette) -> String {
        var lines = [header(for: cassette), "# recorded by hwprobe; format: docs/cassette-format.md"]
        lines += bleLines(cassette.ble)
        for camera in cassette.cameras.sorted(by: { $0.info.uri < $1.info.uri }) { lines += cameraLines(camera) }
        for pad in cassette.pads.sorted(by: { $0.uri < $1.uri }) { lines += padLines(pad) }
        let records = lines.dropFirst().filter { !$0.hasPrefix("#") }.count
        lines.append("end \(records)")
        return lines.joined(separator: "\n") + "\n"
    }

    static func cameraLines(_ camera: CameraCassette) -> [String] {
        var lines = ["device camera \(word(camera.info.uri))",
                     "identity \(word(camera.info.driver)) \(word(camera.info.card))"]
        if let bus = camera.busInfo { lines.append("bus \(word(bus))") }
        for format in camera.info.formats {
            lines.append((["format", word(format.fourcc)] + format.sizes.map(\.description)).joined(separator: " "))
        }
        if let frames = camera.frames {
            lines.append("frames y4m \(word(frames.name)) \(frames.bytes) \(frames.width)x\(frames.height) \(camera.times.count)")
            for frame in camera.times { lines.append("frame \(time(frame.at)) \(frame.sequence)") }
        }
        return lines
    }

    static func padLines(_ pad: PadCassette) -> [String] {
        var lines = ["device pad \(word(pad.uri))", "identity \(word(pad.driver)) \(word(pad.name))"]
        if let serial = pad.serial { lines.append("serial \(word(serial))") }
        for cue in pad.cues {
            lines.append("cue \(time(cue.at)) \(word(cue.name))")
            for command in cue.commands {
                let what: String = switch command.command {
                case .rumble(let level, let duration): "rumble \(level.strong) \(level.weak) \(time(duration))"
                case .indicate(let color?): "light " + hex([color.red, color.green, color.blue])
                case .indicate(nil): "light -"
                case .stop: "stop"
                }
                lines.append("command \(time(command.at)) \(what)")
            }
        }
        return lines
    }

    /// Text that may hold spaces or anything else (a card's name, a URI) as one word: bytes
    /// outside `!`…`~`, and `%` itself, as `%XX`. The empty text is `%`.
    public static func word(_ text: String) -> String {
        if text.isEmpty { return "%" }
        var out = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "%") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + hexByte(byte).uppercased()
            }
        }
        return out
    }

    /// The text a `word` stands for; nil when a `%` is not followed by two hex digits.
    public static func unword(_ word: String) -> String? {
        if word == "%" { return "" }
        var bytes: [UInt8] = []
        var iterator = Array(word.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.nibble), let low = iterator.next().flatMap(Hex.nibble) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
