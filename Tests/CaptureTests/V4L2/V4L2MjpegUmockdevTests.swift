import DeviceSupport
import Foundation
import HAL
import MediaSupport
import Testing
@testable import Capture

/// A camera that offers only MJPG (Tests/Fixtures/umockdev/v4l2_mjpeg_camera.py, serving real
/// JPEGs of QR codes made by qrencode + cjpeg): V4L2Camera must read it through libv4l2's
/// conversion and the codes must decode from the converted frames. Started by the launcher below.
@Suite struct V4L2MjpegUnderUmockdev {
    @Test(.enabled(if: UmockdevBench.inside))
    func readsMjpegThroughLibV4L2() async throws {
        let texts = ProcessInfo.processInfo.environment["MJPEG_TEXTS"]?.split(separator: ",").map(String.init) ?? []
        let camera = try V4L2Camera(path: "/dev/video0", width: 320, height: 240)
        #expect(camera.info.formats.map(\.fourcc) == ["MJPG"])
        let stream = try await camera.start()
        #expect(camera.isConverting)
        let decoder = ZBarDecoder()
        var seen: [String] = []
        var ending: (any Error)?
        do {
            for try await frame in stream {
                #expect(frame.width == 320 && frame.height == 240)
                seen += decoder.decode(frame).compactMap(\.text)
            }
        } catch {
            ending = error
        }
        await camera.stop()
        #expect(seen == texts)
        #expect(ending as? CameraError == .disappeared("/dev/video0"))
    }
}

struct ToolFailed: Error, CustomStringConvertible { var description: String }

@Suite struct V4L2MjpegUmockdevLauncher {
    static var tools: Bool {
        UmockdevBench.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/cjpeg")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/cc")
    }

    /// Writes `frame` as a colour PPM and compresses it with libjpeg-turbo's cjpeg: a YCbCr JPEG
    /// like a webcam's (libv4l2's decoder takes only three-component JPEGs).
    static func jpeg(_ frame: GrayFrame, to url: URL) throws {
        let ppm = url.deletingPathExtension().appendingPathExtension("ppm")
        let rgb = frame.pixels.flatMap { [$0, $0, $0] }
        try (Data("P6\n\(frame.width) \(frame.height)\n255\n".utf8) + Data(rgb)).write(to: ppm)
        try shell("/usr/bin/cjpeg", ["-quality", "85", "-outfile", url.path, ppm.path])
    }

    static func shell(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ToolFailed(description: "\(tool) \(arguments) failed") }
    }

    /// Also as a multi-planar-only camera, which libv4l2 converts through its mplane plugin; the
    /// plugin's "Using mplane plugin for capture" must not reach stdout (`--json` owns it).
    @Test(.enabled(if: tools, "needs umockdev, cjpeg (libjpeg-turbo-progs) and cc"), .timeLimit(.minutes(1)),
          arguments: [false, true])
    func mjpegCameraDecodesThroughLibV4L2(multiPlanar: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mjpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        
        // libv4l2 talks to the kernel through raw syscall(); this preload sends those to umockdev.
        let shim = directory.appendingPathComponent("libsyscallshim.so")
        try Self.shell("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", shim.path,
                                       UmockdevBench.fixtures.appendingPathComponent("syscall_shim.c").path, "-ldl"])
        let texts = ["VB1-MJPEG-ONE", "VB1-MJPEG-TWO", "VB1-MJPEG-THREE"]
        var jpegs: [String] = []
        for (index, text) in texts.enumerated() {
            let url = directory.appendingPathComponent("frame\(index).jpg")
            try Self.jpeg(try QRFixture.frame(text), to: url)
            jpegs.append(url.path)
        }
        let outcome = try UmockdevBench.run(script: "v4l2_mjpeg_camera.py", device: "v4l2-grey-camera.umockdev",
                                            arguments: ["320x240"] + jpegs, filter: "V4L2MjpegUnderUmockdev",
                                            environment: ["LD_PRELOAD": shim.path, "MJPEG_TEXTS": texts.joined(separator: ","),
                                                          "V4L2_MJPEG_MPLANE": multiPlanar ? "1" : "0"])
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(!outcome.output.contains("mplane plugin"), "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("readsMjpegThroughLibV4L2"), "under umockdev:\n\(outcome.output)")
    }
}
