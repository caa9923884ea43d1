import HAL
import LinuxIO

/// HCI through the kernel's user channel (`hci:N`): the controller's packets without BlueZ's host
/// stack in between. Needs CAP_NET_ADMIN and a controller that bluetoothd is not using.
///
/// Unlike the UART and TCP transports this socket keeps packet boundaries: each chunk from
/// ``incoming()`` is exactly one packet including its H4 type byte, and each ``write(_:)`` must be
/// exactly one whole H4 packet (the kernel rejects partial ones). The H4 framer above copes with
/// both, because it frames a byte stream and whole packets are just well-aligned chunks of it.
public final class HCIUserChannelStream: HCIByteStream {
    /// The kernel's controller index this stream holds exclusively (`hciN`).
    public let controller: Int
    let link: DescriptorLink

    /// Names the device for messages, in URI form.
    public var description: String { link.description }

    /// Takes `hciN` through the HCI user channel, so our host stack, not the kernel's, drives it.
    public static func open(controller: Int) async throws(HCILinkError) -> HCIUserChannelStream {
        try await BlockingWork.run("hci-open-user") { () throws(HCILinkError) in
            let fd = try boundSocket(controller: controller)
            return HCIUserChannelStream(fd: fd, controller: controller)
        }
    }

    init(fd: FileDescriptor, controller: Int) {
        self.controller = controller
        let device = "controller hci\(controller)"
        let gone: @Sendable (Errno) -> HCILinkError = { error in
            switch error {
            // The kernel reports an unregistered controller to its user-channel socket as EPIPE.
            case .brokenPipe, .noDevice, .networkDown, .ioError, .shutDown, .noSuchDeviceOrAddress: .deviceVanished(device)
            default: .io("\(device): \(error)")
            }
        }
        link = DescriptorLink(fd: fd, description: DeviceURI.hci(index: controller).description, behaviour: LinkBehaviour(
            readBufferSize: HCIUserChannelABI.maximumPacket,
            zeroReadIsEndOfFile: false, endOfFile: .deviceVanished(device), readError: gone, writeError: gone, readsWholePackets: true))
    }

    deinit { link.requestClose() }

    /// Sends exactly one H4 packet, type byte included; the kernel rejects partial ones.
    public func write(_ bytes: [UInt8]) async throws(HCILinkError) { try await link.send(bytes) }
    /// The packets read, one per chunk; one consumer only.
    public func incoming() -> AsyncThrowingStream<[UInt8], any Error> { link.incoming() }
    /// Releases the user channel so the kernel may use the controller again; idempotent.
    public func close() async { await link.close() }

    /// Opens the controller's user channel (socket → HCIDEVDOWN → bind, see `HCISocket`).
    static func boundSocket(controller: Int) throws(HCILinkError) -> FileDescriptor {
        guard (0..<0xFFFF).contains(controller) else { throw .access(.noSuchController(controller)) }
        do { return try HCISocket.openUserChannel(controller: UInt16(controller)) } catch {
            throw .access(accessError(error.errno, controller: controller, step: error.step))
        }
    }

    /// The kernel's answers, step by step, in the contract's words.
    static func accessError(_ error: Errno, controller: Int, step: String) -> HCIAccessError {
        switch error {
        case .familyNotSupported, .protocolNotSupported: .noKernelSupport
        case .notPermitted, .accessDenied: .notPermitted
        case .busy: .busy("hci\(controller)")
        case .noDevice: .noSuchController(controller)
        case .alreadyInProgress: .system("hci\(controller) is already open through the user channel by another program")
        default: .system("Bluetooth \(step) on hci\(controller): \(error)")
        }
    }
}

extension HCIUserChannelStream: HCIReceivingStream {
    /// Runs `receiver` on the link's reading thread (see HCIChunkReceiver).
    package func deliver(to receiver: any HCIChunkReceiver) { link.deliver(to: receiver) }
}
