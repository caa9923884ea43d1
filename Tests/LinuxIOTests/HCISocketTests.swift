import Glibc
import Testing
@testable import LinuxIO

/// Whether this kernel makes Bluetooth sockets at all (the test machine's has no AF_BLUETOOTH).
let kernelHasBluetooth: Bool = {
    let fd = socket(HCIUserChannelABI.addressFamily, Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue), HCIUserChannelABI.protocolHCI)
    if fd >= 0 { close(fd) }
    return fd >= 0
}()

/// HCISocket against the kernel there is: without Bluetooth sockets, opening the user channel
/// fails at the `socket` step with the family's errno and listing controllers throws it; with
/// them, a controller that does not exist fails at HCIDEVDOWN or bind. The ABI values spelled out
/// in Swift are the kernel's: sockaddr_hci is three packed 16-bit fields, HCIDEVDOWN is _IOW('H', 202, int).
@Suite struct HCISocketTests {
    static let missingFamily: Set<Errno> = [.familyNotSupported, .protocolNotSupported]

    @Test func openingTheUserChannelNamesTheStepTheKernelRefused() throws {
        do {
            // Controller 0xFFF0: an index no machine has, should this kernel have Bluetooth.
            let fd = try HCISocket.openUserChannel(controller: kernelHasBluetooth ? 0xFFF0 : 0)
            fd.close()
            Issue.record("opened a user channel")
        } catch {
            if kernelHasBluetooth {
                #expect(["HCIDEVDOWN", "bind"].contains(error.step), "\(error)")
                #expect([Errno.noDevice, .notPermitted, .accessDenied].contains(error.errno), "\(error.errno)")
            } else {
                #expect(error.step == "socket")
                #expect(Self.missingFamily.contains(error.errno), "\(error.errno) (\(error.errno.code))")
            }
        }
    }

    @Test func listingControllersWithoutBluetoothThrowsTheFamilysErrno() {
        do {
            let found = try HCISocket.controllers()
            #expect(kernelHasBluetooth, "a list (\(found.count)) from a kernel without Bluetooth sockets")
            for controller in found {
                #expect(controller.index >= 0)
                #expect(controller.addressLittleEndian.count == 6)
            }
        } catch {
            #expect(!kernelHasBluetooth || error.meansPermission, "\(error)")
            if !kernelHasBluetooth { #expect(Self.missingFamily.contains(error), "\(error) (\(error.code))") }
        }
    }

    @Test func sockaddrHCIIsTheKernelsLayout() {
        #expect(MemoryLayout<SockaddrHCI>.size == 6)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.family) == 0)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.device) == 2)
        #expect(MemoryLayout<SockaddrHCI>.offset(of: \.channel) == 4)
        let address = SockaddrHCI(family: 31, device: 0x0102, channel: 1)
        let bytes = withUnsafeBytes(of: address) { Array($0) }
        #expect(bytes == [31, 0, 0x02, 0x01, 1, 0], "little-endian fields, in order")
    }

    @Test func theABIValuesAreTheKernels() {
        #expect(HCIUserChannelABI.deviceDownRequest == 0x4004_48CA)
        // _IOW(type, nr, size) = 1 << 30 | size << 16 | type << 8 | nr.
        #expect(HCIUserChannelABI.deviceDownRequest == UInt(1 << 30 | 4 << 16 | 0x48 << 8 | 202))
        #expect(HCIUserChannelABI.addressFamily == 31)
        #expect(HCIUserChannelABI.protocolHCI == 1)
        #expect(HCIUserChannelABI.channelUser == 1)
        #expect(HCIUserChannelABI.maximumPacket == 65_540)
    }
}
