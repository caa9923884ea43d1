import LinuxIO

/// Serial ports that may have an HCI UART board (or anything else) behind them. Virtual consoles
/// and phantom legacy 8250 ports (type 0, "unknown") are left out.
public struct SerialPortProbe: Sendable {
    /// The /sys and /dev tree the probe lists; tests root it in a fake tree.
    public let tree: SystemTree

    /// Lists ports in `tree`, the live system by default.
    public init(tree: SystemTree = .live) { self.tree = tree }

    static let usbAndBoardPrefixes = ["ttyACM", "ttyUSB", "ttyAMA", "ttyGS", "ttyTHS", "ttymxc", "rfcomm"]

    /// The /dev paths of serial ports with a real device behind them (USB, board UARTs, rfcomm, present 8250s).
    public func ports() -> [String] {
        guard let names = tree.list("class/tty") else { return [] }
        return names.filter { name in
            guard tree.exists("class/tty/\(name)/device") else { return false }
            if Self.usbAndBoardPrefixes.contains(where: name.hasPrefix) { return true }
            if name.hasPrefix("ttyS") { return (tree.attribute("class/tty/\(name)/type")).map { $0 != "0" } ?? false }
            return false
        }.map { tree.devPath($0) }
    }
}
