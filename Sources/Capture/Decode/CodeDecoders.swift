import HAL

/// The QR decoders Capture offers, by name: the one place that picks a decoder, so
/// `hwprobe import`, the benchmark and the tests all mean the same thing by "zxing".
package enum CodeDecoders {
    /// Every decoder name, the default first.
    public static let names = [defaultName, "zxing", "zbar"]

    /// What `hwprobe import` decodes with unless told otherwise.
    package static let defaultName = "zxing+zbar"

    /// The default arrangement without its change gate (every frame looked at whole, as before
    /// issue 26): accepted by name for the benchmark, beside the default.
    package static let everyFrameName = "zxing+zbar/every"

    /// The arrangement as it was before it was scheduled by evidence (zbar on every hinted frame
    /// zxing read nothing in): accepted by name, not offered, so benchmarks can run the two side
    /// by side through the real command.
    package static let hintedName = "zxing+zbar/hinted"

    /// The arrangement by evidence with zbar always on the whole frame (the default before zbar
    /// looked at crops first): accepted by name for the benchmark, beside the default.
    package static let wholeFrameName = "zxing+zbar/whole"

    /// A new decoder of that name. Decoders hold scanner state, so each pipeline gets its own.
    public static func decoder(named name: String) throws(UnknownDecoder) -> any CodeDecoder {
        switch name {
        case "zbar": ZBarDecoder()
        case "zxing": ZXingDecoder()
        case defaultName: ZXingThenZBarDecoder(gate: ChangeGate())
        case everyFrameName: ZXingThenZBarDecoder(gate: nil, name: everyFrameName)
        case hintedName: ZXingThenZBarDecoder(fallback: .whenHinted)
        case wholeFrameName: ZXingThenZBarDecoder(fallback: .byEvidenceWholeFrame)
        default: throw UnknownDecoder(name: name)
        }
    }
}

/// A decoder name that `CodeDecoders` does not know.
package struct UnknownDecoder: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name as the caller gave it, so the message can echo it back.
    public var name: String
    /// Names the unknown decoder and lists the ones on offer, for the `HWPROBE_DECODER` usage error.
    public var description: String {
        "no QR decoder called '\(name)' (choose one of \(CodeDecoders.names.joined(separator: ", ")))"
    }
}
