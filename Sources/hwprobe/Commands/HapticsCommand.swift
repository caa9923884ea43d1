import HAL

/// `hwprobe haptics --device URI --cue NAME`: plays one cue and returns once it has finished.
/// `--device replay:FILE` plays nothing: the run ends by checking the commands the cue became
/// against the cassette's pad (`MediaCassettes.replayDifferences`, exit 1 with the difference).
struct HapticsCommand: Sendable {
    var console: Console
    var sinks: HapticSinks

    func run(_ invocation: Invocation) async throws(CLIFailure) -> Int32 {
        guard let deviceText = invocation.value("--device"), let cueText = invocation.value("--cue") else {
            throw CLIFailure(kind: .usage, message: "--device and --cue are required")
        }
        let uri: DeviceURI
        uri = try DeviceURIArgument.parse(deviceText, option: "--device")
        guard uri.family == .haptics || uri.isReplay else {
            throw CLIFailure(kind: .usage, message: "\(uri) is not a haptic device: use usb:VID:PID, hidraw:PATH, evdev:PATH, log:, bell: or replay:FILE")
        }
        guard let cue = HapticCue(rawValue: cueText) else {
            let names = HapticCue.allCases.map(\.rawValue)
            if let meant = DidYouMean.suggestion(for: cueText, among: names) {
                throw CLIFailure(kind: .usage, message: "unknown cue \(cueText) (did you mean \(meant)?)")
            }
            throw CLIFailure(kind: .usage, message: "unknown cue \(cueText): use one of " + names.joined(separator: ", "))
        }
        var sinks = sinks
        sinks.logToStandardOutput = true
        sinks.options.detachKernelDriver = invocation.has("--detach-kernel-driver")
        let sink = try sinks.open(uri)
        if uri == .log { console.out(describeCue(cue) + "\n") }
        // The pattern's own length plus room for slow devices: a wedged pad cannot hold us forever.
        let deadline = cue.pattern.totalDuration + .seconds(5)
        let outcome: Result<Void, HapticError>? = await withTaskGroup(of: Result<Void, HapticError>?.self) { group in
            group.addTask {
                do throws(HapticError) { try await sink.play(cue) } catch { return .failure(error) }
                return .success(())
            }
            group.addTask {
                try? await ContinuousClock().sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await sink.close()
        switch outcome {
        case .success:
            if let differences = sinks.media?.replayDifferences(), !differences.isEmpty {
                throw CLIFailure(kind: .incomplete, message: differences.joined(separator: "\n"))
            }
            return 0
        case .failure(let error): throw HapticSinks.failure(error)
        case nil:
            throw CLIFailure(kind: .timedOut, message: "\(uri) did not finish \(cue.rawValue) within \(deadline.wholeMilliseconds) ms: check the device")
        }
    }
}
