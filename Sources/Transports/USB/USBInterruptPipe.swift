import CLibUSB
import HAL
import LinuxIO
import Synchronization

/// One claimed interface of a USB device and its interrupt OUT endpoint: the smallest libusb
/// session a rumble pad needs. Reports go out as synchronous interrupt transfers with a short
/// timeout on the device's own thread, one at a time and in order.
///
/// Closing (explicitly or when the last reference goes) releases the interface and, when opening
/// detached a kernel driver, hands the interface back to it, so the pad works as before.
public final class USBInterruptPipe: Sendable {
    /// Which interface to claim, whether to take it from a kernel driver, and how long a transfer may take.
    public struct Options: Hashable, Sendable {
        /// The interface to claim (a 360 pad's controls are on interface 0).
        public var interface: Int
        /// Opt-in: unbind a kernel driver (e.g. `xpad`) holding the interface, and rebind it on close.
        public var detachKernelDriver: Bool
        /// How long one transfer may take before it counts as failed: short, because a pad takes
        /// a report within a few milliseconds and a stalled one must not hold up the cue behind it.
        public var timeout: Duration

        /// Interface 0, no kernel driver detached, 300 ms per transfer: what a wired 360 pad needs.
        public init(interface: Int = 0, detachKernelDriver: Bool = false, timeout: Duration = .milliseconds(300)) {
            self.interface = interface
            self.detachKernelDriver = detachKernelDriver
            self.timeout = timeout
        }
    }

    /// The claimed interface's class triple, so a driver can check it found the right interface.
    public struct InterfaceClass: Hashable, Sendable, CustomStringConvertible {
        /// The interface's bInterfaceClass, bInterfaceSubClass and bInterfaceProtocol, as its descriptor says.
        public var `class`: UInt8, subclass: UInt8, `protocol`: UInt8
        /// Builds a class triple from the three interface descriptor fields.
        public init(class: UInt8, subclass: UInt8, protocol: UInt8) {
            self.class = `class`
            self.subclass = subclass
            self.protocol = `protocol`
        }
        /// The triple in lower-case hex, `ff/5d/01`, for messages.
        public var description: String { "\(Hex.byte(`class`, .lower))/\(Hex.byte(subclass, .lower))/\(Hex.byte(`protocol`, .lower))" }
    }

    /// The vendor and product IDs of the opened device.
    public let identity: USBIdentity
    /// The USB bus number the device is on, as libusb reports it.
    public let bus: Int
    /// The device's address on its bus; with `bus`, tells identical pads apart.
    public let address: Int
    /// The interrupt OUT endpoint reports are written to.
    public let endpoint: UInt8
    /// The claimed interface's class triple, for a driver to check it found the right one.
    public let interfaceClass: InterfaceClass
    /// The options the pipe was opened with.
    public let options: Options
    /// `045e:028e@1.7`
    public var name: String { "\(identity)@\(bus).\(address)" }

    private struct Session {
        var context: OpaquePointer?
        var handle: OpaquePointer?
        var detached = false
        var gone = false
    }

    private let session: Mutex<Session>
    private let queue: BlockingWork.Queue

    private init(identity: USBIdentity, bus: Int, address: Int, endpoint: UInt8, interfaceClass: InterfaceClass,
                 options: Options, session: sending Session) {
        self.identity = identity
        self.bus = bus
        self.address = address
        self.endpoint = endpoint
        self.interfaceClass = interfaceClass
        self.options = options
        self.session = Mutex(session)
        queue = BlockingWork.Queue(label: "usb \(identity)@\(bus).\(address)")
    }

    deinit { close() }

    /// Opens the first device with these IDs (or the one at `bus`.`address`), claims
    /// `options.interface` and finds its interrupt OUT endpoint. Quick and synchronous: libusb
    /// reads descriptors from sysfs and claiming is one ioctl.
    public static func open(_ identity: USBIdentity, bus: Int? = nil, address: Int? = nil,
                            options: Options = Options()) throws(USBPipeError) -> USBInterruptPipe {
        let wanted = "\(identity)" + ((bus != nil && address != nil) ? "@\(bus ?? 0).\(address ?? 0)" : "")
        var context: OpaquePointer?
        let rc = libusb_init(&context)
        guard rc == 0, let context else { throw .unavailable(USBProbe.libusbMessage(rc) + USBProbe.hint(rc)) }
        var opened: (handle: OpaquePointer, bus: Int, address: Int)?
        do throws(USBPipeError) {
            opened = try openHandle(context, identity: identity, bus: bus, address: address, wanted: wanted)
        } catch {
            libusb_exit(context)
            throw error
        }
        guard let opened else {
            libusb_exit(context)
            throw .notFound(wanted)
        }
        let (handle, foundBus, foundAddress) = opened
        let name = "\(identity)@\(foundBus).\(foundAddress)"
        var session = Session(context: context, handle: handle)
        do throws(USBPipeError) {
            let (endpoint, interfaceClass) = try interruptOut(handle, interface: options.interface, device: name)
            session.detached = try claim(handle, options: options, device: name)
            return USBInterruptPipe(identity: identity, bus: foundBus, address: foundAddress, endpoint: endpoint,
                                    interfaceClass: interfaceClass, options: options, session: session)
        } catch {
            Self.release(&session, interface: options.interface, claimed: false)
            throw error
        }
    }

    /// Sends one report to the interrupt OUT endpoint and returns once the device has taken it.
    /// After the device has disappeared, every later call throws `.disappeared` without touching it.
    public func write(_ report: [UInt8]) async throws(USBPipeError) {
        try await queue.run { [self] () -> Result<Void, USBPipeError> in Result { () throws(USBPipeError) in try transfer(report) } }
    }

    /// Releases the interface, gives it back to a detached kernel driver and closes the device.
    /// Waits for a transfer in flight (at most one timeout and `unplugGrace`). Safe to call more than once.
    public func close() {
        session.withLock { Self.release(&$0, interface: options.interface, claimed: true) }
    }

    private func transfer(_ report: [UInt8]) throws(USBPipeError) {
        try session.withLock { session throws(USBPipeError) in
            guard !session.gone, let handle = session.handle else { throw .disappeared(name) }
            var bytes = report
            var transferred: Int32 = 0
            let milliseconds = UInt32(max(1, options.timeout.wholeMilliseconds))
            let rc = libusb_interrupt_transfer(handle, endpoint, &bytes, Int32(bytes.count), &transferred, milliseconds)
            if rc == 0 {
                guard Int(transferred) == report.count else {
                    throw .io("\(name) took \(transferred) of \(report.count) bytes on endpoint 0x\(Hex.byte(endpoint, .lower))")
                }
                return
            }
            if Self.unplugged(rc, nodeExists: { nodeExists }, pause: { CurrentThread.sleep(for: $0) }) {
                session.gone = true
                throw .disappeared(name)
            }
            switch rc {
            case LIBUSB_ERROR_TIMEOUT.rawValue:
                throw .timedOut("USB device \(name) did not take a report on endpoint 0x\(Hex.byte(endpoint, .lower)) within \(milliseconds) ms: replug it")
            case LIBUSB_ERROR_PIPE.rawValue:
                throw .io("endpoint 0x\(Hex.byte(endpoint, .lower)) of \(name) stalled")
            case LIBUSB_ERROR_ACCESS.rawValue:
                throw .permissionDenied(name)
            default:
                throw .io("\(name): \(USBProbe.libusbMessage(rc))")
            }
        }
    }

    /// How long a failed transfer watches the device node before it counts as an I/O error rather
    /// than an unplug.
    static let unplugGrace: Duration = .milliseconds(500)

    /// Whether a transfer failed with `rc` because the device went away. An unplug often surfaces
    /// first as an I/O error or a timeout (the host controller lost the device mid-transfer) and
    /// only later as "no device": the hub driver notices the disconnect on its own thread and only
    /// then does usbfs remove the node. So after such an error the node is watched for
    /// `unplugGrace` (seen in the bench VM: an unbound gadget failed the transfer with an I/O error
    /// while its node was still there). A stall or a refusal is the device answering: no wait.
    static func unplugged(_ rc: Int32, grace: Duration = unplugGrace, step: Duration = .milliseconds(10),
                          nodeExists: () -> Bool, pause: (Duration) -> Void) -> Bool {
        if rc == LIBUSB_ERROR_NO_DEVICE.rawValue { return true }
        if rc == LIBUSB_ERROR_PIPE.rawValue || rc == LIBUSB_ERROR_ACCESS.rawValue { return !nodeExists() }
        var waited: Duration = .zero
        while nodeExists() {
            if waited >= grace { return false }
            pause(step)
            waited += step
        }
        return true
    }

    /// usbfs removes `/dev/bus/usb/BBB/DDD` once the kernel has processed the disconnect.
    private var nodeExists: Bool {
        let bus = String(bus), address = String(address)
        let path = "/dev/bus/usb/" + String(repeating: "0", count: max(0, 3 - bus.count)) + bus
            + "/" + String(repeating: "0", count: max(0, 3 - address.count)) + address
        return FileStatus.exists(path)
    }

    private static func release(_ session: inout Session, interface: Int, claimed: Bool) {
        if let handle = session.handle {
            if claimed { _ = libusb_release_interface(handle, Int32(interface)) }
            if session.detached { _ = libusb_attach_kernel_driver(handle, Int32(interface)) }
            libusb_close(handle)
        }
        if let context = session.context { libusb_exit(context) }
        session = Session(gone: true)
    }

    private static func openHandle(_ context: OpaquePointer, identity: USBIdentity, bus: Int?, address: Int?,
                                   wanted: String) throws(USBPipeError) -> (OpaquePointer, Int, Int)? {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        guard count >= 0, let list else { throw .unavailable(USBProbe.libusbMessage(Int32(count))) }
        defer { libusb_free_device_list(list, 1) }
        var candidates: [(device: OpaquePointer, bus: Int, address: Int)] = []
        for i in 0..<count {
            guard let device = list[i] else { continue }
            var descriptor = libusb_device_descriptor()
            guard libusb_get_device_descriptor(device, &descriptor) == 0,
                  descriptor.idVendor == identity.vendor, descriptor.idProduct == identity.product else { continue }
            let at = (Int(libusb_get_bus_number(device)), Int(libusb_get_device_address(device)))
            if let bus, let address, at != (bus, address) { continue }
            candidates.append((device, at.0, at.1))
        }
        // Several identical pads without @BUS.ADDR: the lowest bus and address, so the choice is stable.
        guard let chosen = candidates.min(by: { ($0.bus, $0.address) < ($1.bus, $1.address) }) else { return nil }
        var handle: OpaquePointer?
        let rc = libusb_open(chosen.device, &handle)
        let name = "\(identity)@\(chosen.bus).\(chosen.address)"
        switch rc {
        case 0:
            guard let handle else { throw .io("libusb opened \(name) without a handle") }
            return (handle, chosen.bus, chosen.address)
        case LIBUSB_ERROR_ACCESS.rawValue: throw .permissionDenied(name)
        case LIBUSB_ERROR_NO_DEVICE.rawValue: throw .disappeared(name)
        default: throw .io("cannot open \(name): \(USBProbe.libusbMessage(rc))")
        }
    }

    /// The first interrupt OUT endpoint of the interface's default setting, from the active configuration.
    private static func interruptOut(_ handle: OpaquePointer, interface: Int, device: String) throws(USBPipeError) -> (UInt8, InterfaceClass) {
        var config: UnsafeMutablePointer<libusb_config_descriptor>?
        let rc = libusb_get_active_config_descriptor(libusb_get_device(handle), &config)
        guard rc == 0, let config else { throw .io("cannot read the configuration of \(device): \(USBProbe.libusbMessage(rc))") }
        defer { libusb_free_config_descriptor(config) }
        for i in 0..<Int(config.pointee.bNumInterfaces) {
            let entry = config.pointee.interface[i]
            guard entry.num_altsetting > 0, let setting = entry.altsetting,
                  Int(setting.pointee.bInterfaceNumber) == interface else { continue }
            let kind = InterfaceClass(class: setting.pointee.bInterfaceClass, subclass: setting.pointee.bInterfaceSubClass,
                                      protocol: setting.pointee.bInterfaceProtocol)
            for e in 0..<Int(setting.pointee.bNumEndpoints) {
                let endpoint = setting.pointee.endpoint[e]
                let isOut = endpoint.bEndpointAddress & 0x80 == 0
                let isInterrupt = Int32(endpoint.bmAttributes & 0x03) == Int32(LIBUSB_TRANSFER_TYPE_INTERRUPT.rawValue)
                if isOut && isInterrupt { return (endpoint.bEndpointAddress, kind) }
            }
            throw .unsuitable("interface \(interface) of \(device) (class \(kind)) has no interrupt OUT endpoint")
        }
        throw .unsuitable("\(device) has no interface \(interface) in its active configuration")
    }

    /// Claims the interface, detaching a kernel driver first when asked to; returns whether it detached one.
    private static func claim(_ handle: OpaquePointer, options: Options, device: String) throws(USBPipeError) -> Bool {
        let interface = Int32(options.interface)
        var detached = false
        if options.detachKernelDriver, libusb_kernel_driver_active(handle, interface) == 1 {
            let rc = libusb_detach_kernel_driver(handle, interface)
            switch rc {
            case 0: detached = true
            case LIBUSB_ERROR_NOT_FOUND.rawValue: break
            case LIBUSB_ERROR_ACCESS.rawValue: throw .permissionDenied(device)
            case LIBUSB_ERROR_NO_DEVICE.rawValue: throw .disappeared(device)
            default: throw .io("cannot detach the kernel driver from interface \(interface) of \(device): \(USBProbe.libusbMessage(rc))")
            }
        }
        let rc = libusb_claim_interface(handle, interface)
        switch rc {
        case 0: return detached
        case LIBUSB_ERROR_BUSY.rawValue:
            if detached { _ = libusb_attach_kernel_driver(handle, interface) }
            // Claiming first and asking afterwards: kernel_driver_active needs an ioctl some
            // kernels and emulators lack, and only a refused claim makes the answer matter.
            if libusb_kernel_driver_active(handle, interface) == 1 {
                throw .kernelDriverAttached(device: device, interface: options.interface)
            }
            throw .busy("another program has claimed interface \(interface) of USB device \(device): close it and try again")
        case LIBUSB_ERROR_ACCESS.rawValue:
            if detached { _ = libusb_attach_kernel_driver(handle, interface) }
            throw .permissionDenied(device)
        case LIBUSB_ERROR_NO_DEVICE.rawValue: throw .disappeared(device)
        default:
            if detached { _ = libusb_attach_kernel_driver(handle, interface) }
            throw .io("cannot claim interface \(interface) of \(device): \(USBProbe.libusbMessage(rc))")
        }
    }
}
