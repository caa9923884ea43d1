import Foundation
import HAL
import DeviceSupport
import Testing
@testable import Capture

/// The real V4L2Camera code path against a umockdev-emulated GREY 64x48 camera
/// (Tests/Fixtures/umockdev/v4l2_grey_camera.py): 5 numbered frames, then an unplug (ENODEV).
/// Runs only inside umockdev; `V4L2CameraUmockdevLauncher` starts it there.
@Suite struct V4L2UnderUmockdev {
    @Test(.enabled(if: UmockdevBench.inside, "needs UMOCKDEV_DIR: run through V4L2CameraUmockdevLauncher"))
    func streamsNumberedFramesThenDisappears() async throws {
        let camera = try V4L2Camera(path: "/dev/video0", width: 64, height: 48)
        #expect(camera.info.formats.map(\.fourcc) == ["GREY"])
        let stream = try await camera.start()
        #expect(camera.streamingFormat == PixelFormatInfo(fourcc: "GREY", sizes: [.discrete(width: 64, height: 48)]))
        var firstPixels: [UInt8] = []
        var ending: (any Error)?
        do {
            for try await frame in stream {
                #expect(frame.width == 64 && frame.height == 48 && frame.pixels.count == 64 * 48)
                #expect(UInt64(frame.pixels[0]) == frame.sequence)
                firstPixels.append(frame.pixels[0])
            }
        } catch {
            ending = error
        }
        await camera.stop()
        // The stream keeps only the newest frame, so a slow consumer could miss one; the fake
        // paces frames 100 ms apart, so all five are expected in practice.
        #expect(firstPixels == [1, 2, 3, 4, 5])
        #expect(ending as? CameraError == .disappeared("/dev/video0"))
    }
}

/// The same camera with frame 3 marked V4L2_BUF_FLAG_ERROR (V4L2_FAKE_ERROR_FRAMES=3): that
/// buffer goes back to the driver unread and the stream has a gap where it was.
@Suite struct V4L2ErrorFrameUnderUmockdev {
    @Test(.enabled(if: UmockdevBench.inside && ProcessInfo.processInfo.environment["V4L2_FAKE_ERROR_FRAMES"] == "3",
                   "needs the launcher's V4L2_FAKE_ERROR_FRAMES=3 inside umockdev"))
    func aFrameTheDriverMarksAsFailedIsSkipped() async throws {
        let camera = try V4L2Camera(path: "/dev/video0", width: 64, height: 48)
        let stream = try await camera.start()
        var sequences: [UInt64] = []
        do {
            for try await frame in stream { sequences.append(frame.sequence) }
        } catch {}
        await camera.stop()
        #expect(sequences == [1, 2, 4, 5])
    }
}

@Suite struct V4L2CameraUmockdevLauncher {
    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func runsTheCameraTestUnderUmockdev() throws {
        let outcome = try UmockdevBench.run(script: "v4l2_grey_camera.py", device: "v4l2-grey-camera.umockdev",
                                            filter: "V4L2UnderUmockdev")
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("streamsNumberedFramesThenDisappears"), "under umockdev:\n\(outcome.output)")
    }

    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func runsTheErrorFrameTestUnderUmockdev() throws {
        let outcome = try UmockdevBench.run(script: "v4l2_grey_camera.py", device: "v4l2-grey-camera.umockdev",
                                            filter: "V4L2ErrorFrameUnderUmockdev", environment: ["V4L2_FAKE_ERROR_FRAMES": "3"])
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("aFrameTheDriverMarksAsFailedIsSkipped"), "under umockdev:\n\(outcome.output)")
    }
}
