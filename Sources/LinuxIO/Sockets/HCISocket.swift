import CLinuxShims
import Glibc

/// The kernel's side of a Linux HCI socket, spelled out in Swift with the kernel's values: these
/// are macros and a struct Swift cannot take from <bluetooth/hci.h> as they are (`_IOW` is a
/// function-like macro), and spelling them here keeps the layout checkable in tests.
package enum HCIUserChannelABI {
    /// AF_BLUETOOTH (include/linux/socket.h).
    package static let addressFamily: Int32 = 31
    /// BTPROTO_HCI (include/net/bluetooth/bluetooth.h).
    package static let protocolHCI: Int32 = 1
    /// HCI_CHANNEL_USER (include/net/bluetooth/hci_sock.h): exclusive raw access, no kernel host stack.
    package static let channelUser: UInt16 = 1
    /// HCIDEVDOWN = _IOW('H', 202, int): dir 1 (write) << 30 | size 4 << 16 | 'H' (0x48) << 8 | 202 (0xCA).
    package static let deviceDownRequest: UInt = 0x4004_48CA
    /// The largest packet one read can return: H4 type byte + ACL header (4) + 16-bit length.
    package static let maximumPacket = 1 + 4 + 65_535
}

/// `struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }`:
/// three 16-bit fields, 6 bytes, no padding.
package struct SockaddrHCI {
    package var family: sa_family_t
    package var device: UInt16
    package var channel: UInt16

    package init(family: sa_family_t, device: UInt16, channel: UInt16) {
        self.family = family
        self.device = device
        self.channel = channel
    }
}

/// HCI sockets: the user channel a host stack of its own talks through, and the control socket
/// that lists controllers.
package enum HCISocket {
    /// Which step of opening the user channel the kernel refused, and with what.
    package struct Failure: Error, Hashable, Sendable {
        /// `socket`, `HCIDEVDOWN` or `bind`: messages name it, since each fails for its own reasons.
        package var step: String
        package var errno: Errno
    }

    /// socket → HCIDEVDOWN → bind(HCI_CHANNEL_USER), the sequence BlueZ's own tools use: binding
    /// the user channel fails with EBUSY while the controller is up. The descriptor is
    /// non-blocking and close-on-exec; each read gives one whole H4 packet.
    package static func openUserChannel(controller: UInt16) throws(Failure) -> FileDescriptor {
        let fd = Glibc.socket(HCIUserChannelABI.addressFamily,
                              Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                              HCIUserChannelABI.protocolHCI)
        guard fd >= 0 else { throw Failure(step: "socket", errno: .current) }
        let socket = FileDescriptor(rawValue: fd)
        do throws(Failure) {
            // The argument is the device index itself, passed by value in the pointer slot.
            do { try socket.ioctl(HCIUserChannelABI.deviceDownRequest, value: UInt(controller)) } catch {
                throw Failure(step: "HCIDEVDOWN", errno: error)
            }
            var address = SockaddrHCI(family: sa_family_t(HCIUserChannelABI.addressFamily),
                                      device: controller, channel: HCIUserChannelABI.channelUser)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<SockaddrHCI>.size))
                }
            }
            if bound < 0 { throw Failure(step: "bind", errno: .current) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// One controller as HCIGETDEVINFO describes it.
    package struct Controller: Hashable, Sendable {
        /// The N of hciN.
        package var index: Int
        package var name: String
        /// The public address as the kernel stores it, least significant byte first; all zero
        /// while the controller has never been up.
        package var addressLittleEndian: [UInt8]
        package var isUp: Bool
    }

    /// Every controller the kernel has (HCIGETDEVLIST, then HCIGETDEVINFO for each; one that
    /// vanishes between the two is left out). Errno when the kernel has no Bluetooth sockets.
    package static func controllers() throws(Errno) -> [Controller] {
        let fd = FileDescriptor(rawValue: try check(hal_hci_control_socket()))
        defer { fd.close() }
        var ids = [UInt16](repeating: 0, count: 16)
        let count = try check(hal_hci_dev_list(fd.rawValue, &ids, Int32(ids.count)))
        var found: [Controller] = []
        for id in ids.prefix(Int(count)) {
            var info = hal_hci_controller()
            guard hal_hci_dev_info(fd.rawValue, id, &info) >= 0 else { continue }
            let address = withUnsafeBytes(of: info.bdaddr) { Array($0) }
            let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            found.append(Controller(index: Int(info.dev_id), name: name, addressLittleEndian: address,
                                    isUp: info.flags & (1 << HAL_HCI_UP_FLAG_BIT) != 0))
        }
        return found
    }
}
