import HAL

/// What a person aiming a camera at a code should do next, in two or three words.
package enum AimingHint: String, Sendable, Hashable, CaseIterable {
    /// A code-like region is in view but too small to read.
    case moveCloser = "move closer"
    /// A code-like region is in view, big enough, and still unread: it moves, or the picture is
    /// not sharp yet.
    case holdStill = "hold still"
    /// The picture, or the region where a code seems to be, is too dark or too flat to read.
    case moreLight = "more light"
    /// Nothing code-like in view.
    case aimAtCode = "point the camera at a code"
}

/// Turns what the region finder saw, frame after frame, into one steady hint.
///
/// A hint says why nothing is readable, judged from the newest glimpse: too dark or too flat
/// (`moreLight`: the picture's mean under `darkMean`, or the spread between the region's 5th and
/// 95th percentile under `flatSpread`); no code-like region (`aimAtCode`); the largest unread region spans less than
/// `smallFraction` of the frame's shorter side (`moveCloser`: a VB1 code's 50-odd modules then get
/// under 3 pixels each at 720p, where zbar and zxing start to miss); otherwise it moved or is not
/// sharp yet (`holdStill`). Reading a code clears the hint at once; a new hint must hold for
/// `settle` glimpses in a row before it replaces the one shown, so one odd frame never flickers
/// the line.
package struct AimingAdvisor: Sendable {
    /// The hint to show now; nil before one has settled and as soon as a code is read.
    public private(set) var hint: AimingHint?
    private var candidate: AimingHint?
    private var candidateRuns = 0

    package static let settle = 2
    package static let darkMean = 48
    package static let flatSpread = 40
    package static let smallFraction = 5

    package init() {}

    /// Takes one glimpse: the frame, the regions seen and read in it, and how many codes were
    /// read. Returns the hint to show now (nil: none).
    @discardableResult
    package mutating func observe(_ frame: GrayFrame, sighting: Sighting, symbolCount: Int) -> AimingHint? {
        guard symbolCount == 0, sighting.read.isEmpty else {
            hint = nil
            candidate = nil
            candidateRuns = 0
            return nil
        }
        let now = Self.judge(frame, regions: sighting.regions)
        if now == hint {
            candidate = nil
            candidateRuns = 0
        } else if now == candidate {
            candidateRuns += 1
        } else {
            candidate = now
            candidateRuns = 1
        }
        if candidate != nil, candidateRuns >= Self.settle {
            hint = candidate
            candidate = nil
            candidateRuns = 0
        }
        return hint
    }

    /// The hint one glimpse alone calls for.
    static func judge(_ frame: GrayFrame, regions: [FrameRegion]) -> AimingHint {
        if LightLevels.measure(frame).mean < darkMean { return .moreLight }
        guard let largest = regions.max(by: { $0.width * $0.height < $1.width * $1.height }) else { return .aimAtCode }
        if LightLevels.measure(frame, in: largest).spread < flatSpread { return .moreLight }
        if min(largest.width, largest.height) * smallFraction < min(frame.width, frame.height) { return .moveCloser }
        return .holdStill
    }
}
