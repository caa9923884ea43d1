import HAL
import Testing
@testable import Capture

/// What a DQBUF answer may say about plane 0 before its bytes are read (`Session.greyRegion`).
@Suite struct V4L2DequeueCheckTests {
    func region(used: Int, offset: Int = 0, planes: Int = 2, reported: Int = 2, length: Int = 4096) throws(CameraError) -> Range<Int> {
        let buffer = V4L2DequeuedBuffer(index: 1, sequence: 7, timestamp: .zero, reportedPlanes: reported, bytesUsed: used, dataOffset: offset)
        return try V4L2Camera.Session.greyRegion(of: buffer, planeLength: length, planes: planes, path: "/dev/video0")
    }

    @Test func theDataIsFromItsOffsetToWhatIsUsed() throws {
        #expect(try region(used: 3904, offset: 64) == 64..<3904)
        #expect(try region(used: 4096) == 0..<4096)
        #expect(try region(used: 0) == 0..<4096, "bytesused 0: the whole plane")
        #expect(try region(used: 100, offset: 100) == 100..<100, "nothing after the offset: an empty frame, refused later as short")
    }

    @Test func answersPastThePlaneAreDriverBugs() {
        func why(_ body: () throws(CameraError) -> Range<Int>) -> String {
            do { _ = try body(); return "no error" } catch { if case .io(let why) = error { return why }; return "\(error)" }
        }
        #expect(why { () throws(CameraError) in try region(used: 4097) }.hasPrefix("/dev/video0: the driver said 4097 bytes of buffer 1's plane 0 are used; it is 4096 long"))
        #expect(why { () throws(CameraError) in try region(used: 100, offset: 101) }.hasPrefix("/dev/video0: the driver put buffer 1's data at offset 101, past the 100 bytes used"))
        #expect(why { () throws(CameraError) in try region(used: 100, reported: 9) }.hasPrefix("/dev/video0: the driver returned buffer 1 with 9 planes; it has 2"))
        #expect(why { () throws(CameraError) in try region(used: Int(UInt32.max)) }.contains("are used; it is 4096 long"))
    }
}
