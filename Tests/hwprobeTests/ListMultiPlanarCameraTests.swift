import DeviceSupport
import Foundation
import Testing
@testable import hwprobe

/// `hwprobe list --json` against the umockdev multi-planar camera
/// (Tests/Fixtures/umockdev/v4l2_mplane_camera.py): listed like any other camera.
@Suite struct ListMultiPlanarCameraUnderUmockdev {
    @Test(.enabled(if: UmockdevBench.inside))
    func listsTheCameraWithItsFormats() async throws {
        let captured = CapturedConsole()
        let code = await HWProbe(console: captured.console).run(["list", "--json"])
        #expect(code == 0, "\(captured.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(captured.stdout.utf8)) as? [String: Any])
        let cameras = try #require(json["cameras"] as? [[String: Any]], "\(captured.stdout)")
        let camera = try #require(cameras.first { $0["uri"] as? String == "v4l2:/dev/video0" }, "\(captured.stdout)")
        #expect(camera["card"] as? String == "umockdev multi-planar camera" && camera["driver"] as? String == "umockdev")
        let formats = (camera["formats"] as? [[String: Any]] ?? []).map { format in
            "\(format["fourcc"] as? String ?? "?") \((format["sizes"] as? [String] ?? []).joined(separator: ","))"
        }
        #expect(formats == ["YUYV 64x48", "NM12 64x48"], "\(captured.stdout)")
    }
}

@Suite struct ListMultiPlanarCameraUmockdevLauncher {
    @Test(.enabled(if: UmockdevBench.available, "needs umockdev-wrapper and /usr/bin/python3 with gi"), .timeLimit(.minutes(1)))
    func listUnderUmockdev() throws {
        let outcome = try UmockdevBench.run(script: "v4l2_mplane_camera.py", device: "v4l2-mplane-camera.umockdev",
                                            filter: "ListMultiPlanarCameraUnderUmockdev")
        #expect(outcome.status == 0, "under umockdev:\n\(outcome.output)")
        #expect(outcome.passed("listsTheCameraWithItsFormats"), "under umockdev:\n\(outcome.output)")
    }
}
