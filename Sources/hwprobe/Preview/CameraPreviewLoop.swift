import Capture
import HAL
import LinuxIO

/// Keeps the presenter's camera preview fresh: a few times a second it takes the newest glimpse
/// of the decoding pipeline the command is reading, and turns it into preview rows on a thread
/// that runs only when a core is idle (`IdleWorker`), so the preview never takes time from
/// decoding. A glimpse already drawn is not drawn again; while the idle thread is still busy
/// with the last picture (the cores are all taken), the tick is skipped.
struct CameraPreviewLoop: Sendable {
    /// How often a new picture is made: four a second is enough to aim with.
    static let interval = Duration.milliseconds(250)

    let presenter: FlowPresenter
    let clock: any Clock<Duration>
    let style: CameraPreview.Style
    /// The pipeline being read now (the command may switch cameras).
    let pipeline: @Sendable () -> DecodingPipeline?

    /// Runs until cancelled, then takes the preview away.
    func run() async {
        let claim = presenter.claimPreview()
        defer { presenter.endPreview(claim) }
        guard let worker = IdleWorker(label: "hwprobe preview") else { return }
        defer { worker.close() }
        var advisor = AimingAdvisor()
        var aspect: Double?
        var drawn: (glimpse: UInt64, layout: PreviewLayout)?
        var observed: UInt64?
        while !Task.isCancelled {
            guard (try? await clock.sleep(for: Self.interval)) != nil else { break }
            guard let glimpse = pipeline()?.latestGlimpse, glimpse.frame.width > 0, glimpse.frame.height > 0 else { continue }
            let frameAspect = Double(glimpse.frame.width) / Double(glimpse.frame.height)
            if aspect != frameAspect {
                aspect = frameAspect
                presenter.beginPreview(claim, aspect: frameAspect)
            }
            guard let layout = presenter.previewLayout else { continue }
            if let drawn, drawn.glimpse == glimpse.number, drawn.layout == layout { continue }
            let fresh = observed != glimpse.number
            let style = style
            let made = await worker.run { [advisor] () -> ([String], AimingAdvisor) in
                var advisor = advisor
                let sighting = glimpse.sighting ?? Sighting(regions: CodeRegions.find(in: glimpse.frame, limit: 3), read: [])
                if fresh { advisor.observe(glimpse.frame, sighting: sighting, symbolCount: glimpse.symbolCount) }
                let view = CameraPreview.View(frame: glimpse.frame, sighting: sighting, symbolCount: glimpse.symbolCount, hint: advisor.hint)
                return (CameraPreview.rows(view, layout: layout, style: style), advisor)
            }
            guard let (rows, advised) = made, !Task.isCancelled else { continue }
            advisor = advised
            observed = glimpse.number
            drawn = (glimpse.number, layout)
            presenter.showPreview(claim, rows: rows, for: layout)
        }
    }
}
