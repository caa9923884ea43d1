import CLibUSB
import Testing
@testable import Transports

/// How a failed interrupt transfer is told apart from an unplug (`USBInterruptPipe.unplugged`):
/// the node is watched with an injected clock, so these never sleep.
@Suite struct USBUnplugDetection {
    /// A device node that is still there for `polls` looks, then gone; counts the waiting.
    final class Node: @unchecked Sendable {
        var remaining: Int
        var paused: Duration = .zero
        var looks = 0
        init(goneAfter polls: Int) { remaining = polls }
        func exists() -> Bool {
            looks += 1
            if remaining == 0 { return false }
            remaining -= 1
            return true
        }
        func pause(_ duration: Duration) { paused += duration }
    }

    @Test func anIOErrorWhileTheNodeLingersIsAnUnplugOnceTheNodeGoes() {
        // as seen in the bench VM: the gadget unbound, the transfer failed with an I/O error,
        // and usbfs removed the node a little later
        let node = Node(goneAfter: 3)
        #expect(USBInterruptPipe.unplugged(LIBUSB_ERROR_IO.rawValue, nodeExists: node.exists, pause: node.pause))
        #expect(node.paused == .milliseconds(30))
    }

    @Test func aTimeoutIsAnUnplugTooWhenTheNodeGoesWithinTheGrace() {
        let node = Node(goneAfter: 49)
        #expect(USBInterruptPipe.unplugged(LIBUSB_ERROR_TIMEOUT.rawValue, nodeExists: node.exists, pause: node.pause))
    }

    @Test func anIOErrorWithTheNodeStayingIsAnIOErrorAfterTheGrace() {
        let node = Node(goneAfter: .max)
        #expect(!USBInterruptPipe.unplugged(LIBUSB_ERROR_IO.rawValue, nodeExists: node.exists, pause: node.pause))
        #expect(node.paused == USBInterruptPipe.unplugGrace)
    }

    @Test func noDeviceIsAnUnplugAtOnce() {
        let node = Node(goneAfter: .max)
        #expect(USBInterruptPipe.unplugged(LIBUSB_ERROR_NO_DEVICE.rawValue, nodeExists: node.exists, pause: node.pause))
        #expect(node.looks == 0 && node.paused == .zero)
    }

    @Test func aStallIsTheDeviceAnsweringAndNeverWaits() {
        let node = Node(goneAfter: .max)
        #expect(!USBInterruptPipe.unplugged(LIBUSB_ERROR_PIPE.rawValue, nodeExists: node.exists, pause: node.pause))
        #expect(node.looks == 1 && node.paused == .zero)
    }
}
