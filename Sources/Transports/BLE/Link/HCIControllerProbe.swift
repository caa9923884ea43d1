import HAL
import LinuxIO

/// A local Bluetooth controller the kernel knows about.
public struct HCIControllerInfo: Hashable, Sendable {
    /// The kernel's controller number: N in `hciN` and in the `hci:N` URI.
    public var index: Int
    /// The kernel's name for it, e.g. `hci0`.
    public var name: String
    /// Nil while the controller has not reported one (all zeros).
    public var address: BLEAddress?
    /// Whether the kernel has the controller up; the user channel needs it down, and takes it down itself.
    public var isUp: Bool

    /// Builds the description of one controller, as the probe reads it from the kernel.
    public init(index: Int, name: String, address: BLEAddress?, isUp: Bool) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
    }

    /// The device URI that opens this controller through the HCI user channel.
    public var uri: String { "hci:\(index)" }
}

/// Why the kernel's Bluetooth side could not be used, worded as what to do about it.
public enum HCIAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no Bluetooth sockets; the bluetooth module is not loaded.
    case noKernelSupport
    /// We lack `CAP_NET_ADMIN`, which the HCI user channel needs.
    case notPermitted
    /// Another program, often bluetoothd, holds the named controller.
    case busy(String)
    /// The kernel has no controller with that index.
    case noSuchController(Int)
    /// Any other socket error, worded as the OS gave it.
    case system(String)

    /// The words a person reads in messages and logs, saying what to do about it.
    public var description: String {
        switch self {
        case .noKernelSupport: "kernel has no Bluetooth support (AF_BLUETOOTH unavailable: load the bluetooth module)"
        case .notPermitted: "needs CAP_NET_ADMIN (run with sudo or setcap cap_net_admin+ep on hwprobe)"
        case .busy(let name): "\(name) is busy: another program holds it through the HCI user channel (or it is still being set up): close that program and retry, or use another controller"
        case .noSuchController(let index): "no such controller hci\(index) (see hwprobe list)"
        case .system(let why): why
        }
    }

    /// The access error an OS error on the HCI socket means, for the controller being opened.
    static func from(_ error: Errno, controller: Int? = nil) -> HCIAccessError {
        if error == .familyNotSupported || error == .protocolNotSupported { return .noKernelSupport }
        if error.meansPermission { return .notPermitted }
        if error == .busy { return .busy("hci\(controller ?? 0)") }
        if let controller, error == .noDevice || error == .noEntry { return .noSuchController(controller) }
        return .system("Bluetooth: \(error)")
    }
}

/// Lists controllers through the kernel's HCI control socket (HCIGETDEVLIST / HCIGETDEVINFO).
public enum HCIControllerProbe {
    /// Every controller the kernel lists, with address and state; throws when Bluetooth sockets are unusable.
    public static func controllers() throws(HCIAccessError) -> [HCIControllerInfo] {
        let controllers: [HCISocket.Controller]
        do { controllers = try HCISocket.controllers() } catch { throw .from(error) }
        return controllers.map { controller in
            let raw = controller.addressLittleEndian
            let address = raw.allSatisfy { $0 == 0 } ? nil : BLEAddress(littleEndian: raw, kind: .public)
            return HCIControllerInfo(index: controller.index, name: controller.name, address: address, isUp: controller.isUp)
        }
    }
}
