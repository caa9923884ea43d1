import CLinuxShims
import HAL
import LinuxIO

/// A local Bluetooth controller the kernel knows about.
public struct HCIControllerInfo: Hashable, Sendable {
    public var index: Int
    public var name: String
    /// Nil while the controller has not reported one (all zeros).
    public var address: BLEAddress?
    public var isUp: Bool

    public init(index: Int, name: String, address: BLEAddress?, isUp: Bool) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
    }

    public var uri: String { "hci:\(index)" }
}

/// Why the kernel's Bluetooth side could not be used, worded as what to do about it.
public enum HCIAccessError: Error, Hashable, Sendable, CustomStringConvertible {
    case noKernelSupport
    case notPermitted
    case busy(String)
    case noSuchController(Int)
    case system(String)

    public var description: String {
        switch self {
        case .noKernelSupport: "kernel has no Bluetooth support (AF_BLUETOOTH unavailable: load the bluetooth module)"
        case .notPermitted: "needs CAP_NET_ADMIN (run with sudo or setcap cap_net_admin+ep on hwprobe)"
        case .busy(let name): "\(name) is busy: another program holds it through the HCI user channel (or it is still being set up): close that program and retry, or use another controller"
        case .noSuchController(let index): "no such controller hci\(index) (see hwprobe list)"
        case .system(let why): why
        }
    }

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
    public static func controllers() throws(HCIAccessError) -> [HCIControllerInfo] {
        let socket: Int32
        do { socket = try check(hal_hci_control_socket()) } catch { throw .from(error) }
        let fd = FileDescriptor(rawValue: socket)
        defer { fd.close() }
        var ids = [UInt16](repeating: 0, count: 16)
        let count: Int32
        do { count = try check(hal_hci_dev_list(socket, &ids, Int32(ids.count))) } catch { throw .from(error) }
        var found: [HCIControllerInfo] = []
        for id in ids.prefix(Int(count)) {
            var info = hal_hci_controller()
            guard hal_hci_dev_info(socket, id, &info) >= 0 else { continue } // vanished meanwhile
            let raw = withUnsafeBytes(of: info.bdaddr) { Array($0) }
            let address = raw.allSatisfy { $0 == 0 } ? nil : BLEAddress(littleEndian: raw, kind: .public)
            let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            found.append(HCIControllerInfo(index: Int(info.dev_id), name: name, address: address,
                                           isUp: info.flags & (1 << HAL_HCI_UP_FLAG_BIT) != 0))
        }
        return found
    }
}
