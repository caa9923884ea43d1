import HAL
import Testing
@testable import Capture

@Suite struct V4L2GreyPathTests {
    @Test func fourccCodesAreLittleEndian() {
        #expect(V4L2GreyPath.grey.fourcc == 0x5945_5247) // 'G' 'R' 'E' 'Y'
        #expect(PixelFormatInfo.fourccString(V4L2GreyPath.yuyv.fourcc) == "YUYV")
        #expect(V4L2GreyPath(fourcc: V4L2GreyPath.code("NV12")) == .nv12)
        #expect(V4L2GreyPath(fourcc: V4L2GreyPath.code("MJPG")) == nil)
    }

    @Test func choosesTheCheapestGreyPath() {
        let c = V4L2GreyPath.code
        #expect(V4L2GreyPath.choose(from: [c("YUYV"), c("MJPG"), c("GREY")]) == .grey)
        #expect(V4L2GreyPath.choose(from: [c("YUYV"), c("NV12")]) == .nv12)
        #expect(V4L2GreyPath.choose(from: [c("MJPG"), c("YU12"), c("YUYV")]) == .yu12)
        #expect(V4L2GreyPath.choose(from: [c("MJPG"), c("YUYV")]) == .yuyv)
        #expect(V4L2GreyPath.choose(from: [c("MJPG"), c("RGB3")]) == nil)
        #expect(V4L2GreyPath.choose(from: []) == nil)
        // A multi-planar camera's formats: a separate Y plane is as cheap as GREY's, YUYV dearer.
        #expect(V4L2GreyPath.choose(from: [c("YUYV"), c("NM12")]) == .nv12m)
        #expect(V4L2GreyPath.choose(from: [c("YM12"), c("NV12")]) == .nv12)
        #expect(V4L2GreyPath.choose(from: [c("BA81"), c("NM12"), c("NM16"), c("YM24")]) == .nv12m)
    }

    @Test func everyPathIsNamedByItsKernelFourcc() {
        // From linux/videodev2.h: NV12M is 'NM12', YUV420M 'YM12', YVU444M 'YM42'.
        #expect(V4L2GreyPath(fourcc: V4L2GreyPath.code("NM12")) == .nv12m)
        #expect(V4L2GreyPath(fourcc: V4L2GreyPath.code("YM12")) == .yu12m)
        #expect(V4L2GreyPath(fourcc: V4L2GreyPath.code("YM42")) == .yv24m)
        #expect(Set(V4L2GreyPath.allCases.map(\.fourcc)).count == V4L2GreyPath.allCases.count)
        #expect(V4L2GreyPath.allCases.last == .yuyv)
    }

    @Test func aFormatWeCannotReadDirectlyIsRefusedByName() {
        let names = V4L2GreyPath.allCases.map(\.name).joined(separator: ", ")
        #expect(throws: CameraError.noUsableFormat("/dev/video9 in MJPG (the formats read directly are \(names))")) {
            try V4L2Camera(path: "/dev/video9", format: "MJPG")
        }
    }

    @Test func bytesNeededEndsAtTheLastRowsPixels() {
        #expect(V4L2GreyPath.nv12m.bytesNeeded(width: 64, height: 48, bytesPerLine: 80) == 80 * 47 + 64)
        #expect(V4L2GreyPath.yuyv.bytesNeeded(width: 64, height: 48, bytesPerLine: 0) == 128 * 48)
        #expect(V4L2GreyPath.grey.bytesNeeded(width: 0, height: 48, bytesPerLine: 80) == nil)
        #expect(V4L2GreyPath.grey.bytesNeeded(width: Int.max, height: 2, bytesPerLine: Int.max) == nil)
    }

    @Test func yuyvTakesEveryOtherByteAndHonoursThePitch() {
        // 3x2 YUYV, pitch 8 (6 used + 2 padding) — odd width still reads Y0 Y1 Y2 of each row.
        let row0: [UInt8] = [10, 200, 11, 201, 12, 202, 99, 99]
        let row1: [UInt8] = [20, 210, 21, 211, 22, 212]
        let out = (row0 + row1).withUnsafeBytes { V4L2GreyPath.yuyv.extract(from: $0, width: 3, height: 2, bytesPerLine: 8) }
        #expect(out == [10, 11, 12, 20, 21, 22])
    }

    /// Found by the v4l2 fuzz target (Fuzz/Corpus/v4l2/regression-size-overflow): S_FMT answered
    /// with sizes whose buffer length overflowed an Int, which trapped instead of refusing the frame.
    @Test func sizesTooLargeToCountAreRefusedNotATrap() {
        let buffer = Array(UInt8(0x05)...UInt8(0x23))
        let out = buffer.withUnsafeBytes {
            V4L2GreyPath.nv12.extract(from: $0, width: 4_211_344_133, height: 4_227_595_259, bytesPerLine: 4_227_595_259)
        }
        #expect(out == nil)
        for path in V4L2GreyPath.allCases {
            let huge = buffer.withUnsafeBytes { path.extract(from: $0, width: Int.max, height: 2, bytesPerLine: Int.max) }
            #expect(huge == nil, "\(path)")
        }
    }

    @Test func planarFormatsTakeTheYPlane() {
        // 4x2 Y plane with pitch 5, then chroma that must be ignored.
        let y: [UInt8] = [1, 2, 3, 4, 0, 5, 6, 7, 8, 0]
        let chroma: [UInt8] = [128, 128, 128, 128, 128]
        for path in V4L2GreyPath.allCases where path != .yuyv {
            let out = (y + chroma).withUnsafeBytes { path.extract(from: $0, width: 4, height: 2, bytesPerLine: 5) }
            #expect(out == [1, 2, 3, 4, 5, 6, 7, 8])
        }
    }

    @Test func shortBuffersAreRejected() {
        let bytes = [UInt8](repeating: 0, count: 7)
        #expect(bytes.withUnsafeBytes { V4L2GreyPath.grey.extract(from: $0, width: 4, height: 2, bytesPerLine: 4) } == nil)
        #expect(bytes.withUnsafeBytes { V4L2GreyPath.yuyv.extract(from: $0, width: 2, height: 2, bytesPerLine: 4) } == nil)
    }

    @Test func requestNumbersMatchTheKernelHeaders() {
        // Values from linux/videodev2.h on 64-bit Linux.
        #expect(V4L2Request.getFormat == 0xC0D0_5604)
        #expect(V4L2Request.setFormat == 0xC0D0_5605)
        #expect(V4L2Request.requestBuffers == 0xC014_5608)
        #expect(V4L2Request.queryBuffer == 0xC058_5609)
        #expect(V4L2Request.queueBuffer == 0xC058_560F)
        #expect(V4L2Request.dequeueBuffer == 0xC058_5611)
        #expect(V4L2Request.streamOn == 0x4004_5612)
        #expect(V4L2Request.streamOff == 0x4004_5613)
    }

    @Test func aMissingNodeIsNotFound() {
        #expect(throws: CameraError.notFound("/nonexistent/video9")) { try V4L2Camera(path: "/nonexistent/video9") }
    }
}
