import DeviceSupport
import Foundation
import HAL
import Testing
@testable import Capture

/// The real V4L2Camera code path against a umockdev-emulated multi-planar-only camera
/// (Tests/Fixtures/umockdev/v4l2_mplane_camera.py): NM12 in two planes, rows of 80 bytes for a
/// 64-pixel picture, the Y data 64 bytes into plane 0; 5 numbered frames, then an unplug.
/// `V4L2_MPLANE_HOSTILE` makes one of its answers wrong. Started by the launcher below.
@Suite struct V4L2MultiPlanarUnderUmockdev {
    static let hostile = ProcessInfo.processInfo.environment["V4L2_MPLANE_HOSTILE"] ?? ""

    /// Frame k's grey picture as the fake writes it: (k + 3 row + x) mod 256.
    static func picture(_ k: Int) -> [UInt8] {
        (0..<48).flatMap { row in (0..<64).map { x in UInt8((k + 3 * row + x) & 0xFF) } }
    }

    @Test(.enabled(if: UmockdevBench.inside && hostile.isEmpty))
    func streamsTheGreyPlaneThenDisappears() async throws {
        let camera = try V4L2Camera(path: "/dev/video0", width: 64, height: 48)
        #expect(camera.info.formats == [PixelFormatInfo(fourcc: "YUYV", sizes: [.discrete(width: 64, height: 48)]),
                                        PixelFormatInfo(fourcc: "NM12", sizes: [.discrete(width: 64, height: 48)])])
        let stream = try await camera.start()
        #expect(camera.streamingFormat == PixelFormatInfo(fourcc: "NM12", sizes: [.discrete(width: 64, height: 48)]))
        #expect(!camera.isConverting)
        var sequences: [UInt64] = []
        var ending: (any Error)?
        do {
            for try await frame in stream {
                #expect(frame.width == 64 && frame.height == 48)
                // Every byte of the picture, none of the row padding or the bytes before the data.
                #expect(frame.pixels == Self.picture(Int(frame.sequence)), "frame \(frame.sequence)")
                sequences.append(frame.sequence)
            }
        } catch {
            ending = error
        }
        await camera.stop()
        #expect(sequences == [1, 2, 3, 4, 5])
        #expect(ending as? CameraError == .disappeared("/dev/video0"))
        // HWPROBE_V4L2_FORMAT's check: a format the camera does not offer is refused up front.
        #expect(throws: CameraError.noUsableFormat("/dev/video0 in GREY (it offers YUYV, NM12)")) {
            try V4L2Camera(path: "/dev/video0", format: "GREY")
        }
    }

    /// What each wrong answer must be reported as (`CameraError.io`, never a crash or a garbled frame).
    static let expected: [String: String] = [
        "format-planes": "the driver set a format of 9 planes; V4L2 allows 1 to 8",
        "buffer-planes": "the driver described buffer 0 with 9 planes; its format has 2",
        "short-plane": "the driver made buffer 0 1000 bytes long; 64x48 NM12 at 80 bytes a line needs 3824",
        "bytesused": "the driver said 8193 bytes of buffer 0's plane 0 are used; it is 8192 long",
    ]

    @Test(.enabled(if: UmockdevBench.inside && !hostile.isEmpty))
    func aWrongAnswerEndsWithAClearError() async throws {
        let expected = try #require(Self.expected[Self.hostile])
        let camera = try V4L2Camera(path: "/dev/video0", width: 64, height: 48)
        var failure: CameraError?
        var frames = 0
        do {
            for try await _ in try await camera.start() { frames += 1 }
        } catch {
            failure = error as? CameraError
        }
        await camera.stop()
        #expect(frames == 0)
        guard case .io(let why) = failure else { Issue.record("ended with \(String(describing: failure))"); return }
        #expect(why.hasPrefix("/dev/video0: \(expected), which cannot be right: update the kernel"), "\(why)")
    }
}

@Suite struct V4L2MultiPlanarUmockdevLauncher {
    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func capturesTheGreyPlaneUnderUmockdev() throws {
        let outcome = try UmockdevBench.run(script: "v4l2_mplane_camera.py", device: "v4l2-mplane-camera.umockdev",
                                            filter: "V4L2MultiPlanarUnderUmockdev")
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("streamsTheGreyPlaneThenDisappears"), "under umockdev:\n\(outcome.output)")
    }

    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)),
          arguments: V4L2MultiPlanarUnderUmockdev.expected.keys.sorted())
    func aHostileDriverGivesAClearError(_ answer: String) throws {
        let outcome = try UmockdevBench.run(script: "v4l2_mplane_camera.py", device: "v4l2-mplane-camera.umockdev",
                                            filter: "V4L2MultiPlanarUnderUmockdev", environment: ["V4L2_MPLANE_HOSTILE": answer])
        #expect(outcome.status == 0, "under umockdev with \(answer):\n\(outcome.output)")
        #expect(outcome.passed("aWrongAnswerEndsWithAClearError"), "under umockdev with \(answer):\n\(outcome.output)")
    }
}
