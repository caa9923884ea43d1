import Foundation
import HAL
import LinuxIO
import Testing
@testable import Capture

@Suite struct V4L2ProbeTests {
    func makeRoot() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hwprobe-v4l2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dev"), withIntermediateDirectories: true)
        return root
    }

    @Test func noVideo4LinuxClassIsNoKernelSupport() throws {
        let root = try makeRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let probe = V4L2Probe(tree: SystemTree(sysRoot: root.path + "/sys", devRoot: root.path + "/dev"))
        #expect(throws: CameraError.self) { try probe.probe() }
        do { _ = try probe.probe() } catch {
            #expect(error.description.hasPrefix("kernel has no V4L2 support"))
        }
    }

    @Test func nodesThatCannotBeAskedAreProblemsNotCrashes() throws {
        let root = try makeRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        for node in ["video0", "video1"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("sys/class/video4linux/\(node)"), withIntermediateDirectories: true)
        }
        // video0 has no device node (unplugged between the two looks); video1 is not a V4L2 device.
        try Data().write(to: root.appendingPathComponent("dev/video1"))
        let report = try V4L2Probe(tree: SystemTree(sysRoot: root.path + "/sys", devRoot: root.path + "/dev")).probe()
        #expect(report.cameras.isEmpty)
        #expect(report.problems.count == 2)
        #expect(report.problems[0] == "camera \(root.path)/dev/video0 not found")
        #expect(report.problems[1].contains("video1"))
    }

    @Test func fourccCodesReadAsText() {
        #expect(PixelFormatInfo.fourccString(0x5659_5559) == "YUYV")
        #expect(PixelFormatInfo.fourccString(0x4750_4A4D) == "MJPG")
        #expect(PixelFormatInfo.fourccString(0x2020_3859) == "Y8")
        // v4l2_fourcc_be: bit 31 marks the big-endian variant of a format (vivid offers both)
        #expect(PixelFormatInfo.fourccString(0x2036_3159 | 1 << 31) == "Y16-BE")
        #expect(PixelFormatInfo.fourccString(0x3531_5241 | 1 << 31) == "AR15-BE")
        #expect(FrameSize.range(minWidth: 48, minHeight: 32, maxWidth: 4096, maxHeight: 2160).description == "48x32-4096x2160")
    }
}
