import CLinuxShims
import Glibc
import HAL
import LinuxIO

/// The kernel's side of a Linux HCI user-channel socket, spelled out in Swift with the kernel's
/// values: these are macros and a struct Swift cannot take from <bluetooth/hci.h> as they are
/// (`_IOW` is a function-like macro), and spelling them here keeps the layout checkable in tests.
enum HCIUserChannelABI {
    /// AF_BLUETOOTH (include/linux/socket.h).
    static let addressFamily: Int32 = 31
    /// BTPROTO_HCI (include/net/bluetooth/bluetooth.h).
    static let protocolHCI: Int32 = 1
    /// HCI_CHANNEL_USER (include/net/bluetooth/hci_sock.h): exclusive raw access, no kernel host stack.
    static let channelUser: UInt16 = 1
    /// HCIDEVDOWN = _IOW('H', 202, int): dir 1 (write) << 30 | size 4 << 16 | 'H' (0x48) << 8 | 202 (0xCA).
    static let deviceDownRequest: UInt = 0x4004_48CA
    /// The largest packet one read can return: H4 type byte + ACL header (4) + 16-bit length.
    static let maximumPacket = 1 + 4 + 65_535
}

/// `struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }`:
/// three 16-bit fields, 6 bytes, no padding.
struct SockaddrHCI {
    var family: sa_family_t
    var device: UInt16
    var channel: UInt16
}

/// HCI through the kernel's user channel (`hci:N`): the controller's packets without BlueZ's host
/// stack in between. Needs CAP_NET_ADMIN and a controller that bluetoothd is not using.
///
/// Unlike the UART and TCP transports this socket keeps packet boundaries: each chunk from
/// ``incoming()`` is exactly one packet including its H4 type byte, and each ``write(_:)`` must be
/// exactly one whole H4 packet (the kernel rejects partial ones). The H4 framer above copes with
/// both, because it frames a byte stream and whole packets are just well-aligned chunks of it.
public final class HCIUserChannelStream: HCIByteStream {
    public let controller: Int
    let link: DescriptorLink

    public var description: String { link.description }

    public static func open(controller: Int) async throws(HCILinkError) -> HCIUserChannelStream {
        try await BlockingOpen.run { () throws(HCILinkError) in
            let fd = try boundSocket(controller: controller)
            return HCIUserChannelStream(fd: fd, controller: controller)
        }
    }

    private init(fd: Int32, controller: Int) {
        self.controller = controller
        let device = "controller hci\(controller)"
        let gone: @Sendable (Errno) -> HCILinkError = { error in
            switch error.code {
            // The kernel reports an unregistered controller to its user-channel socket as EPIPE.
            case EPIPE, ENODEV, ENETDOWN, EIO, ESHUTDOWN, ENXIO: .deviceVanished(device)
            default: .io("\(device): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: DeviceURI.hci(index: controller).description, behaviour: LinkBehaviour(
            readBufferSize: HCIUserChannelABI.maximumPacket,
            zeroReadIsEndOfFile: false, endOfFile: .deviceVanished(device), readError: gone, writeError: gone))
    }

    deinit { link.requestClose() }

    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    public func close() async { await link.close() }

    /// socket → HCIDEVDOWN → bind(HCI_CHANNEL_USER), the sequence BlueZ's own tools use: binding
    /// the user channel fails with EBUSY while the controller is up.
    static func boundSocket(controller: Int) throws(HCILinkError) -> Int32 {
        guard (0..<0xFFFF).contains(controller) else { throw .access(.noSuchController(controller)) }
        let fd = Glibc.socket(HCIUserChannelABI.addressFamily,
                              Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                              HCIUserChannelABI.protocolHCI)
        guard fd >= 0 else { throw .access(accessError(Errno.current, controller: controller, step: "socket")) }
        do throws(HCILinkError) {
            // The argument is the device index itself, passed by value in the pointer slot.
            let down = hal_ioctl(fd, HCIUserChannelABI.deviceDownRequest, UnsafeMutableRawPointer(bitPattern: UInt(controller)))
            if down < 0 { throw HCILinkError.access(accessError(Errno(-down), controller: controller, step: "HCIDEVDOWN")) }
            var address = SockaddrHCI(family: sa_family_t(HCIUserChannelABI.addressFamily),
                                      device: UInt16(controller), channel: HCIUserChannelABI.channelUser)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<SockaddrHCI>.size))
                }
            }
            if bound < 0 { throw HCILinkError.access(accessError(Errno.current, controller: controller, step: "bind")) }
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// The kernel's answers, step by step, in the contract's words.
    static func accessError(_ error: Errno, controller: Int, step: String) -> HCIAccessError {
        switch error.code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: .noKernelSupport
        case EPERM, EACCES: .notPermitted
        case EBUSY: .busy("hci\(controller)")
        case ENODEV: .noSuchController(controller)
        case EALREADY: .system("hci\(controller) is already open through the user channel by another program")
        default: .system("Bluetooth \(step) on hci\(controller): \(error)")
        }
    }
}
