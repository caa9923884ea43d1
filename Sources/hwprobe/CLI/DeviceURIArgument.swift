import HAL

/// A device URI typed after an option (`--hci`, `--camera`, `--device`, `--haptics`). Every
/// command parses its URIs through here, so each one answers a mistyped URI the same way: with
/// the option's name, what went wrong, and the URI the person most likely meant, written the way
/// people type devices (`hci0`, `/dev/ttyACM0`, `127.0.0.1:9101`, `/dev/video0`, `clip.y4m`,
/// `045e:028e`).
enum DeviceURIArgument {
    /// One way to name a device of a family, for messages and shell completions.
    struct Form: Sendable, Equatable {
        var scheme: String
        var example: String
        /// Whether a file path follows the scheme (completions then offer paths).
        var takesPath: Bool
    }

    static func forms(_ family: DeviceURI.Family) -> [Form] {
        let sim = Form(scheme: "sim", example: "sim:", takesPath: false)
        switch family {
        case .hci:
            return [Form(scheme: "hci", example: "hci:N", takesPath: false),
                    Form(scheme: "uart", example: "uart:/dev/ttyX?baud=N&rtscts=1", takesPath: true),
                    Form(scheme: "tcp", example: "tcp:HOST:PORT", takesPath: false), sim,
                    Form(scheme: "replay", example: "replay:FILE", takesPath: true)]
        case .camera:
            return [Form(scheme: "v4l2", example: "v4l2:/dev/videoN", takesPath: true),
                    Form(scheme: "file", example: "file:PATH.y4m[?pace=max]", takesPath: true), sim,
                    Form(scheme: "replay", example: "replay:FILE", takesPath: true)]
        case .haptics:
            return [Form(scheme: "usb", example: "usb:VID:PID", takesPath: false),
                    Form(scheme: "hidraw", example: "hidraw:/dev/hidrawN", takesPath: true),
                    Form(scheme: "evdev", example: "evdev:/dev/input/eventN", takesPath: true),
                    Form(scheme: "log", example: "log:", takesPath: false),
                    Form(scheme: "bell", example: "bell:", takesPath: false),
                    Form(scheme: "replay", example: "replay:FILE", takesPath: true)]
        case .any:
            let replay = Form(scheme: "replay", example: "replay:FILE", takesPath: true)
            return forms(.hci) + forms(.camera).filter { $0 != sim && $0 != replay } + forms(.haptics).filter { $0 != replay }
        }
    }

    /// The family an option's URIs belong to, from the command table.
    static func family(of option: String) -> DeviceURI.Family {
        for spec in Commands.all {
            for candidate in spec.allOptions where candidate.spellings.contains(option) {
                if case .deviceURI(let family) = candidate.value { return family }
            }
        }
        return .any
    }

    /// Parses `text` given to `option`; a usage failure names the option and, where it can, the
    /// URI meant. A URI naming a device by its identity (`usb:045e:028e@1-2.3`) is looked up
    /// among what is attached and comes back as the URI of its node (exit 3 when none is).
    static func parse(_ text: String, option: String, locator: @autoclosure () -> DeviceLocator = .live) throws(CLIFailure) -> DeviceURI {
        let uri: DeviceURI
        do {
            uri = try DeviceURI(parsing: text)
        } catch {
            let family = family(of: option)
            if let meant = suggestion(for: text, family: family) {
                throw CLIFailure(kind: .usage, message: "\(option) \(text) is not a device URI: did you mean \(option) \(meant)?")
            }
            var message = "\(option): \(error.description)"
            if family != .any { message += "; \(option) takes " + naturalList(forms(family).map(\.example)) }
            throw CLIFailure(kind: .usage, message: message)
        }
        guard case .located(let location) = uri else { return uri }
        do throws(CLIFailure) {
            return try locator().resolve(location)
        } catch {
            throw CLIFailure(kind: error.kind, message: "\(option) \(text): \(error.message)")
        }
    }

    /// The URI someone most likely meant by `text` (which did not parse), among `family`'s
    /// forms; nil when nothing fits well enough to say so. Only a suggestion that parses is made.
    static func suggestion(for text: String, family: DeviceURI.Family) -> String? {
        let schemes = Set(forms(family).map(\.scheme))
        let candidates = guesses(for: text).filter { guess in
            guard let uri = try? DeviceURI(parsing: guess) else { return false }
            return uri.family == family || family == .any || (uri.family == .any && schemes.contains("sim"))
        }
        return candidates.first
    }

    /// Every reading of `text` as a URI, most specific first; `suggestion` keeps the first that
    /// parses and fits the family.
    private static func guesses(for text: String) -> [String] {
        var guesses: [String] = []
        let lower = text.lowercased()
        // A known scheme, misspelt (`v4l:/dev/video0`, `hdiraw:/dev/hidraw3`).
        if let colon = text.firstIndex(of: ":"), colon != text.startIndex {
            let scheme = String(lower[..<colon])
            let known = forms(.any).map(\.scheme)
            if let near = DidYouMean.suggestion(for: scheme, among: known) {
                guesses.append(near + text[colon...])
            }
        }
        // Bare words and kernel names.
        if ["sim", "log", "bell"].contains(lower) { guesses.append(lower + ":") }
        if let index = Self.number(after: "hci", in: lower) ?? Int(lower).map(String.init) { guesses.append("hci:\(index)") }
        if let n = Self.number(after: "video", in: lower) { guesses.append("v4l2:/dev/video\(n)") }
        if let n = Self.number(after: "hidraw", in: lower) { guesses.append("hidraw:/dev/hidraw\(n)") }
        if let n = Self.number(after: "event", in: lower) { guesses.append("evdev:/dev/input/event\(n)") }
        // Device nodes, by the directory and name the kernel gives them.
        if text.hasPrefix("/dev/") {
            let name = text.split(separator: "/").last.map(String.init) ?? ""
            if text.hasPrefix("/dev/input/") { guesses.append("evdev:" + text) }
            if name.hasPrefix("hidraw") { guesses.append("hidraw:" + text) }
            if name.hasPrefix("video") || text.hasPrefix("/dev/v4l/") { guesses.append("v4l2:" + text) }
            if name.hasPrefix("tty") || text.hasPrefix("/dev/serial/") || name.hasPrefix("rfcomm") { guesses.append("uart:" + text) }
        }
        // USB IDs (`045e:028e`, optionally `@BUS.ADDR`) before HOST:PORT, which they also look like.
        let ids = text.split(separator: "@", maxSplits: 1)[0].split(separator: ":", omittingEmptySubsequences: false)
        if ids.count == 2, ids.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isHexDigit) }) { guesses.append("usb:" + text) }
        // HOST:PORT (`127.0.0.1:9101`, `localhost:9101`, `::1:9101`).
        if let colon = text.lastIndex(of: ":"), colon != text.startIndex,
           let port = UInt16(text[text.index(after: colon)...]), port > 0 {
            guesses.append("tcp:" + text)
        }
        // Anything else that looks like a file: a video to play.
        if !text.contains(":"), lower.hasSuffix(".y4m") || (text.contains("/") && !text.hasPrefix("/dev/")) {
            guesses.append("file:" + text)
        }
        return guesses
    }

    /// `hci0` → "0", `video12` → "12": the number after a kernel device name.
    private static func number(after prefix: String, in text: String) -> String? {
        guard text.hasPrefix(prefix) else { return nil }
        let digits = text.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy(\.isNumber), let n = Int(digits) else { return nil }
        return String(n)
    }

    private static func naturalList(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " or " + (items.last ?? "")
    }
}
