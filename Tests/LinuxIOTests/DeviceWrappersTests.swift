import Glibc
import Testing
@testable import LinuxIO

/// A regular file with a few bytes, open read-write, and its directory (both gone after `close`).
struct RegularFile {
    let directory: TemporaryDirectory
    let descriptor: FileDescriptor

    init() throws {
        directory = try TemporaryDirectory()
        try directory.write("plain", Array("not a device".utf8))
        descriptor = try FileDescriptor.open(directory.path("plain"), .readWrite)
    }

    func close() { descriptor.close(); directory.remove() }
}

/// The evdev and hidraw wrappers on nodes that are neither, a pipe and a regular file: every
/// ioctl comes back as the kernel's ENOTTY (the error that says "not this kind of node"), a
/// closed descriptor as EBADF, and hidrawName, which never throws, is nil.
@Suite struct InputDeviceWrappersTests {
    func expectNotInputNode(_ fd: FileDescriptor, _ what: String) {
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.evdevName() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.evdevIdentity() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.evdevHasRumble() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.evdevHasGain() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.evdevEffectSlots() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.hidrawIdentity() }
        #expect(throws: Errno.notTTY, "\(what)") { _ = try fd.hidrawReportDescriptor() }
        #expect(fd.hidrawName() == nil, "\(what)")
    }

    @Test func onAPipe() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        expectNotInputNode(read, "pipe")
    }

    @Test func onARegularFile() throws {
        let file = try RegularFile()
        defer { file.close() }
        expectNotInputNode(file.descriptor, "regular file")
    }

    @Test func onAClosedDescriptor() throws {
        let closed = try closedDescriptor()
        #expect(throws: Errno.badDescriptor) { _ = try closed.evdevName() }
        #expect(throws: Errno.badDescriptor) { _ = try closed.hidrawIdentity() }
        #expect(closed.hidrawName() == nil)
    }

    @Test func theBusConstantsAreTheKernels() {
        #expect(InputIdentity.busUSB == 0x03)
        #expect(InputIdentity.busBluetooth == 0x05)
        #expect(FileDescriptor.forceFeedbackGain == 0x60)
    }
}

/// The V4L2 wrappers on a regular file and a pipe: QUERYCAP throws ENOTTY, ENUM_FMT and
/// ENUM_FRAMESIZES report -ENOTTY in their result, a direct mmap of a pipe fails with the kernel's
/// errno, direct adoption is a no-op that succeeds, and VIDEO_MAX_PLANES is 8.
@Suite struct VideoDeviceWrappersTests {
    @Test func aRegularFileIsNoVideoNode() throws {
        let file = try RegularFile()
        defer { file.close() }
        #expect(throws: Errno.notTTY) { _ = try file.descriptor.videoCapabilities() }
        let format = file.descriptor.videoFormat(bufferType: 1, index: 0)
        #expect(format.result == -ENOTTY)
        #expect(format.fourcc == 0 && format.flags == 0)
        #expect(file.descriptor.videoFormat(bufferType: UInt32(VideoMultiPlanar.bufferType), index: 0).result == -ENOTTY)
        #expect(file.descriptor.videoFrameSize(fourcc: 0x5659_5559, index: 0).result == -ENOTTY)
        var capability = [UInt8](repeating: 0, count: 104)
        #expect(VideoCalls.direct.ioctl(file.descriptor, 0x8068_5600 /* VIDIOC_QUERYCAP */, &capability) == -ENOTTY)
    }

    @Test func aPipeCannotBeMapped() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        let result = VideoCalls.direct.map(read, length: 4096, offset: 0)
        switch result {
        case .success(let address):
            munmap(address, 4096)
            Issue.record("mapped a pipe")
        case .failure(let error):
            print("mmap of a pipe: \(error.code) (\(error))")
            #expect([Errno.noDevice, .accessDenied].contains(error), "\(error.code)")
        }
    }

    @Test func directAdoptionIsANoOp() throws {
        let (read, write) = try makePipe()
        defer { read.close(); write.close() }
        #expect(VideoCalls.direct.adopt(read, multiPlanar: false))
        #expect(VideoCalls.direct.adopt(read, multiPlanar: true))
        #expect(isOpen(read) && read.isNonBlocking == false, "the descriptor is left as it was")
        #expect(!VideoCalls.direct.throughLibV4L2 && VideoCalls.converting.throughLibV4L2)
    }

    @Test func theMultiPlanarConstants() {
        #expect(VideoMultiPlanar.maximumPlanes == 8)
        #expect(VideoMultiPlanar.bufferType == 9)
    }
}
