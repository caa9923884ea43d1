import Foundation
import HAL
import Testing
@testable import Capture

/// The real V4L2Camera code path against a umockdev-emulated GREY 64x48 camera
/// (Tests/Fixtures/umockdev/v4l2_grey_camera.py): 5 numbered frames, then an unplug (ENODEV).
/// Runs only inside umockdev; `V4L2CameraUmockdevLauncher` starts it there.
@Suite struct V4L2UnderUmockdev {
    static var inUmockdev: Bool { ProcessInfo.processInfo.environment["UMOCKDEV_DIR"] != nil }

    @Test(.enabled(if: inUmockdev, "needs UMOCKDEV_DIR: run through V4L2CameraUmockdevLauncher"))
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

@Suite struct V4L2CameraUmockdevLauncher {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/umockdev")
    static var available: Bool {
        ProcessInfo.processInfo.environment["UMOCKDEV_DIR"] == nil
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-wrapper")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    @Test(.enabled(if: available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func runsTheCameraTestUnderUmockdev() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/umockdev-wrapper")
        let binary = ProcessInfo.processInfo.arguments[0]
        process.arguments = ["/usr/bin/python3", Self.fixtures.appendingPathComponent("v4l2_grey_camera.py").path,
                             Self.fixtures.appendingPathComponent("v4l2-grey-camera.umockdev").path, "--",
                             binary, "--testing-library", "swift-testing", "--filter", "V4L2UnderUmockdev"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = FileManager.default.temporaryDirectory.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "under umockdev:\n\(text)")
        #expect(text.contains("streamsNumberedFramesThenDisappears() passed"), "under umockdev:\n\(text)")
    }
}
