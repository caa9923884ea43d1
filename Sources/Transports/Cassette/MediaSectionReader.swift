import HAL

/// The reader's side of the camera and pad sections: each record checked against
/// `CameraCassette.Limits` and `PadCassette.Limits`, and each section, when it ends, checked
/// whole (its identity there, as many `frame` lines as `frames` promised).
struct MediaSections {
    enum Section { case camera, pad }
    var cameras: [CameraCassette] = []
    var pads: [PadCassette] = []
    var section: Section?
    private var sectionLine = 0
    private var expectedFrames = 0
    private var hasIdentity = false
    private var uri = ""

    mutating func device(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        let isCamera = words[1] == "camera"
        let limit = isCamera ? CameraCassette.Limits.textBytes : PadCassette.Limits.textBytes
        guard words.count == 3, let uri = CassetteFormat.unword(words[2]), !uri.isEmpty, uri.utf8.count <= limit else {
            throw .damaged(line: line, expected: "`device \(words[1]) URI`", found: text)
        }
        let count = isCamera ? cameras.count : pads.count
        guard count < Cassette.maximumMediaDevices else {
            throw .tooMany(line: line, what: isCamera ? "cameras" : "pads", limit: Cassette.maximumMediaDevices)
        }
        guard !(isCamera ? cameras.contains { $0.info.uri == uri } : pads.contains { $0.uri == uri }) else {
            throw .damaged(line: line, expected: "each device once (\(uri) came before)", found: text)
        }
        if isCamera {
            cameras.append(CameraCassette(info: CameraInfo(uri: uri, card: "", driver: "", formats: [])))
        } else {
            pads.append(PadCassette(uri: uri, driver: "", name: ""))
        }
        section = isCamera ? .camera : .pad
        sectionLine = line
        expectedFrames = 0
        hasIdentity = false
        self.uri = uri
    }

    /// The section that was being read is over: is it whole?
    mutating func close(line: Int) throws(CassetteError) {
        guard let section else { return }
        self.section = nil
        guard hasIdentity else {
            throw .damaged(line: line, expected: "an `identity` record in the section of \(uri) (from line \(sectionLine))", found: "none")
        }
        if section == .camera, let camera = cameras.last, camera.frames != nil, camera.times.count != expectedFrames {
            throw .damaged(line: line, expected: "\(expectedFrames) `frame` records for \(uri), as its `frames` line says",
                           found: "\(camera.times.count)")
        }
    }

    mutating func record(_ words: [String], _ text: String, line: Int, fileIsNewer: Bool) throws(CassetteError) {
        func damaged(_ expected: String) -> CassetteError { .damaged(line: line, expected: expected, found: text) }
        // Each section's own limit on a text field (a camera's card name, a pad's driver and name).
        let limit = section == .pad ? PadCassette.Limits.textBytes : CameraCassette.Limits.textBytes
        func textWord(_ word: String, _ what: String) throws(CassetteError) -> String {
            guard let value = CassetteFormat.unword(word), value.utf8.count <= limit else {
                throw damaged("\(what) as one word (%XX for a space or a byte outside printable ASCII), at most \(limit) bytes")
            }
            return value
        }
        let keyword = words[0]
        if keyword == "identity" {
            guard words.count == 3, !hasIdentity else { throw damaged("one `identity DRIVER NAME` at the start of the section") }
            let driver = try textWord(words[1], "the driver"), name = try textWord(words[2], "the name")
            if section == .camera {
                cameras[cameras.count - 1].info.driver = driver
                cameras[cameras.count - 1].info.card = name
            } else {
                pads[pads.count - 1].driver = driver
                pads[pads.count - 1].name = name
            }
            hasIdentity = true
            return
        }
        guard hasIdentity else {
            if fileIsNewer { return }
            throw damaged("`identity DRIVER NAME` first in a \(section == .camera ? "camera" : "pad") section")
        }
        switch (section, keyword) {
        case (.camera, "bus"):
            guard words.count == 2, cameras[cameras.count - 1].busInfo == nil else { throw damaged("one `bus BUSINFO`") }
            cameras[cameras.count - 1].busInfo = try textWord(words[1], "the bus info")
        case (.camera, "format"):
            try format(words, text, line: line)
        case (.camera, "frames"):
            try frames(words, text, line: line)
        case (.camera, "frame"):
            try frame(words, text, line: line)
        case (.pad, "serial"):
            guard words.count == 2, pads[pads.count - 1].serial == nil else { throw damaged("one `serial TEXT`") }
            pads[pads.count - 1].serial = try textWord(words[1], "the serial number")
        case (.pad, "cue"):
            try cue(words, text, line: line)
        case (.pad, "command"):
            try command(words, text, line: line)
        default:
            // A record a newer minor version added: skipped, as the format promises.
            if fileIsNewer { return }
            throw damaged(section == .camera ? "a camera record (identity, bus, format, frames, frame)" : "a pad record (identity, serial, cue, command)")
        }
    }

    private mutating func format(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        guard words.count >= 2, words.count - 2 <= CameraCassette.Limits.sizesPerFormat, let fourcc = CassetteFormat.unword(words[1]),
              !fourcc.isEmpty, fourcc.utf8.count <= 8 else {
            throw .damaged(line: line, expected: "`format FOURCC SIZE…` with at most \(CameraCassette.Limits.sizesPerFormat) sizes", found: text)
        }
        guard cameras[cameras.count - 1].frames == nil else {
            throw .damaged(line: line, expected: "a camera's `format` records before its `frames`", found: text)
        }
        guard cameras[cameras.count - 1].info.formats.count < CameraCassette.Limits.formats else {
            throw .tooMany(line: line, what: "formats for one camera", limit: CameraCassette.Limits.formats)
        }
        var sizes: [FrameSize] = []
        for word in words.dropFirst(2) {
            guard let size = Self.frameSize(word) else {
                throw .damaged(line: line, expected: "a size WIDTHxHEIGHT or MINWxMINH-MAXWxMAXH (640x480)", found: text)
            }
            sizes.append(size)
        }
        cameras[cameras.count - 1].info.formats.append(PixelFormatInfo(fourcc: fourcc, sizes: sizes))
    }

    private mutating func frames(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        guard words.count == 6, words[1] == "y4m", let name = CassetteFormat.unword(words[2]), Self.isPlainName(name),
              let bytes = CassetteReader.decimal(Substring(words[3]), digits: 10), bytes <= CameraCassette.Limits.frameFileBytes,
              case .discrete(let width, let height)? = Self.frameSize(words[4]),
              let count = CassetteReader.decimal(Substring(words[5]), digits: 6) else {
            throw .damaged(line: line, expected: "`frames y4m NAME BYTES WIDTHxHEIGHT COUNT` (NAME a file beside the cassette, "
                           + "BYTES at most \(CameraCassette.Limits.frameFileBytes))", found: text)
        }
        guard cameras[cameras.count - 1].frames == nil else { throw .damaged(line: line, expected: "one `frames` record per camera", found: text) }
        guard count <= CameraCassette.Limits.frames else {
            throw .tooMany(line: line, what: "frames for one camera", limit: CameraCassette.Limits.frames)
        }
        // Every frame is at least its FRAME line and its Y plane.
        let frameBytes = width * height + 6
        guard bytes >= count * frameBytes else {
            throw .damaged(line: line, expected: "at least \(count * frameBytes) bytes for \(count) frames of \(width)x\(height)", found: text)
        }
        cameras[cameras.count - 1].frames = CameraCassette.FrameFile(name: name, bytes: bytes, width: width, height: height)
        expectedFrames = count
    }

    private mutating func frame(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        guard cameras[cameras.count - 1].frames != nil else {
            throw .damaged(line: line, expected: "a `frames` record before the camera's `frame` records", found: text)
        }
        guard words.count == 3, let at = Self.time(words[1]), let sequence = CassetteReader.decimal(Substring(words[2]), digits: 18) else {
            throw .damaged(line: line, expected: "`frame SECONDS SEQUENCE` (seconds with six decimals, below a day)", found: text)
        }
        let times = cameras[cameras.count - 1].times
        guard times.count < expectedFrames else {
            throw .tooMany(line: line, what: "`frame` records (the `frames` line says \(expectedFrames))", limit: expectedFrames)
        }
        if let last = times.last, at < last.at || UInt64(sequence) <= last.sequence {
            throw .damaged(line: line, expected: "frames in order (the last was \(last.sequence) at \(CassetteFormat.time(last.at)))", found: text)
        }
        cameras[cameras.count - 1].times.append(CameraCassette.FrameTime(at: at, sequence: UInt64(sequence)))
    }

    private mutating func cue(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        guard words.count == 3, let at = Self.time(words[1]), let name = CassetteFormat.unword(words[2]), HapticCue(rawValue: name) != nil else {
            throw .damaged(line: line, expected: "`cue SECONDS NAME` with a cue hwprobe plays ("
                           + HapticCue.allCases.map(\.rawValue).joined(separator: ", ") + ")", found: text)
        }
        let cues = pads[pads.count - 1].cues
        guard cues.count < PadCassette.Limits.cues else { throw .tooMany(line: line, what: "cues on one pad", limit: PadCassette.Limits.cues) }
        if let last = cues.last, at < last.at {
            throw .damaged(line: line, expected: "cues in time order (the last was at \(CassetteFormat.time(last.at)))", found: text)
        }
        pads[pads.count - 1].cues.append(PadCassette.Cue(name: name, at: at))
    }

    private mutating func command(_ words: [String], _ text: String, line: Int) throws(CassetteError) {
        func damaged() -> CassetteError {
            .damaged(line: line, expected: "`command SECONDS rumble STRONG WEAK SECONDS`, `command SECONDS light RRGGBB|-` or `command SECONDS stop`", found: text)
        }
        guard words.count >= 3, let at = Self.time(words[1]) else { throw damaged() }
        let command: PadCassette.Command
        switch (words[2], words.count) {
        case ("rumble", 6):
            guard let strong = UInt8(words[3]), let weak = UInt8(words[4]), String(strong) == words[3], String(weak) == words[4],
                  let duration = Self.time(words[5]) else { throw damaged() }
            command = .rumble(RumbleLevel(strong: strong, weak: weak), duration)
        case ("light", 4):
            if words[3] == "-" {
                command = .indicate(nil)
            } else {
                let digits = Array(words[3].utf8)
                guard digits.count == 6, let value = UInt32(words[3], radix: 16), words[3] == words[3].lowercased() else { throw damaged() }
                command = .indicate(IndicatorColor(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF)))
            }
        case ("stop", 3):
            command = .stop
        default:
            throw damaged()
        }
        guard let cue = pads[pads.count - 1].cues.indices.last else {
            throw .damaged(line: line, expected: "a `cue` record before its `command` records", found: text)
        }
        let commands = pads[pads.count - 1].cues[cue].commands
        guard commands.count < PadCassette.Limits.commandsPerCue else {
            throw .tooMany(line: line, what: "commands in one cue", limit: PadCassette.Limits.commandsPerCue)
        }
        if let last = commands.last, at < last.at {
            throw .damaged(line: line, expected: "a cue's commands in time order (the last was at \(CassetteFormat.time(last.at)))", found: text)
        }
        pads[pads.count - 1].cues[cue].commands.append(PadCassette.TimedCommand(at: at, command: command))
    }

    /// A file name with no directory in it: a cassette only ever points beside itself.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && name.utf8.count <= 255
            && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    static func frameSize(_ word: String) -> FrameSize? {
        func pair(_ text: Substring) -> (Int, Int)? {
            let parts = text.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = CassetteReader.decimal(parts[0], digits: 5), let h = CassetteReader.decimal(parts[1], digits: 5),
                  w > 0, h > 0, w <= Y4MLimits.maximumDimension, h <= Y4MLimits.maximumDimension else { return nil }
            return (w, h)
        }
        let ends = word.split(separator: "-", omittingEmptySubsequences: false)
        switch ends.count {
        case 1: return pair(ends[0]).map { .discrete(width: $0.0, height: $0.1) }
        case 2:
            guard let low = pair(ends[0]), let high = pair(ends[1]) else { return nil }
            return .range(minWidth: low.0, minHeight: low.1, maxWidth: high.0, maxHeight: high.1)
        default: return nil
        }
    }

    /// `SECONDS.MICROS` below a day, as the BLE records write it.
    static func time(_ word: String) -> Duration? {
        let parts = word.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 6, let seconds = CassetteReader.decimal(parts[0], digits: 5),
              let micros = CassetteReader.decimal(parts[1], digits: 6) else { return nil }
        let at = Duration.seconds(seconds) + .microseconds(micros)
        return at < BLECassette.Limits.time ? at : nil
    }
}

/// The picture sizes a frame file may have (the Y4M reader's own limit, `Y4MHeader.maximumDimension`).
enum Y4MLimits {
    static let maximumDimension = 16_384
}
