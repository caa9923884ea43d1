import CBlueZ
import Foundation
import Glibc
import HAL
import LinuxIO
import Testing
@testable import Transports

@Suite(.timeLimit(.minutes(1))) struct HCIUserChannelStreamTests {
    /// Whether this kernel has AF_BLUETOOTH at all (this machine's does not; the bench VM's does).
    static var kernelHasBluetooth: Bool {
        let fd = socket(HCIUserChannelABI.addressFamily, Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue),
                        HCIUserChannelABI.protocolHCI)
        if fd >= 0 { close(fd) }
        return fd >= 0 || (errno != EAFNOSUPPORT && errno != EPROTONOSUPPORT)
    }

    /// Issue 26: after traffic, a quiet `hci:` link must leave its reading thread blocked. The
    /// user channel is a packet socket: a non-blocking SEQPACKET socketpair behaves the same way
    /// towards the reader (whole packets, EAGAIN when empty). The bench VM's bluetooth group
    /// checks the real socket.
    @Test func aQuietLinkAfterTrafficCostsNoCPU() async throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        let stream = HCIUserChannelStream(fd: FileDescriptor(rawValue: fds[0]), controller: 0)
        let share = try await QuietLink.readerShare(of: stream.link, farEnd: fds[1], traffic: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        #expect(share < QuietLink.bound, "the reading thread used \(share) of a core while the link was quiet")
        await stream.close()
    }

    @Test func openingFailsWithTheContractsError() async {
        if !Self.kernelHasBluetooth {
            await #expect(throws: HCILinkError.access(.noKernelSupport)) {
                _ = try await HCIStreams.open(.hci(index: 0))
            }
            #expect(HCILinkError.access(.noKernelSupport).description == HCIAccessError.noKernelSupport.description)
        } else {
            // With Bluetooth (the bench VM), a controller that cannot exist: not permitted unprivileged,
            // else no such controller, from HCIDEVDOWN.
            await #expect {
                _ = try await HCIUserChannelStream.open(controller: 250)
            } throws: { error in
                let error = error as? HCILinkError
                return error == .access(.noSuchController(250)) || error == .access(.notPermitted)
            }
        }
    }

    @Test func sockaddrHCIHasTheKernelsLayout() {
        #expect(MemoryLayout<SockaddrHCI>.size == 6)
        #expect(MemoryLayout<SockaddrHCI>.alignment == 2)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.family) == 0)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.device) == 2)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.channel) == 4)
        #expect(MemoryLayout<SockaddrHCI>.size == MemoryLayout<sockaddr_hci>.size, "BlueZ's header agrees")
        let address = SockaddrHCI(family: 31, device: 0x0102, channel: 1)
        #expect(withUnsafeBytes(of: address) { Array($0) } == [31, 0, 0x02, 0x01, 1, 0])
    }

    @Test func constantsMatchTheKernelHeaders() {
        #expect(HCIUserChannelABI.addressFamily == AF_BLUETOOTH)
        #expect(HCIUserChannelABI.protocolHCI == BTPROTO_HCI)
        #expect(Int32(HCIUserChannelABI.channelUser) == HCI_CHANNEL_USER)
        // _IOW(type, nr, int) = (1 << 30) | (sizeof(int) << 16) | (type << 8) | nr
        let ioW = UInt(1) << 30 | UInt(MemoryLayout<Int32>.size) << 16 | UInt(UInt8(ascii: "H")) << 8 | 202
        #expect(HCIUserChannelABI.deviceDownRequest == ioW)
        #expect(HCIUserChannelABI.deviceDownRequest == 0x4004_48CA)
    }

    @Test func kernelAnswersBecomeTheContractsMessages() {
        let map = { (code: Int32) in HCIUserChannelStream.accessError(Errno(code), controller: 0, step: "bind") }
        #expect(map(EAFNOSUPPORT) == .noKernelSupport)
        #expect(map(EPERM) == .notPermitted)
        #expect(map(EACCES) == .notPermitted)
        #expect(map(ENODEV) == .noSuchController(0))
        #expect(map(EBUSY) == .busy("hci0"))
        #expect(map(EBUSY).description == "hci0 is busy: another program holds it through the HCI user channel (or it is still being set up): close that program and retry, or use another controller")
        #expect(map(EPERM).description.hasPrefix("needs CAP_NET_ADMIN (run with sudo or setcap"))
    }
}
