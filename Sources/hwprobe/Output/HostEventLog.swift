import BLEProtocol
import HAL
import Synchronization
import Transports

/// `-v`: one line per meaningful event, through `Console.diagnostic` (so a drawn flow can take the
/// lines over). The host stack reports facts (`HostEvent`); this is where they become words,
/// including which driver rule claims each peripheral found, which the stack does not know.
final class HostEventLog: Sendable {
    private let console: Console
    private let registry: DriverRegistry
    /// Peripheral lines already said: discovery reports a device many times a second, and a
    /// person wants it once, then again only when what it is (its name or claim) changes.
    private let said = Mutex<Set<String>>([])

    init(console: Console, registry: DriverRegistry) {
        self.console = console
        self.registry = registry
    }

    /// The hook to hand to `BLECentral.open`.
    var handler: HostEventHandler { { [self] event in record(event) } }

    func record(_ event: HostEvent) {
        if let line = line(for: event) { console.diagnostic(line) }
    }

    func line(for event: HostEvent) -> String? {
        switch event {
        case .controllerOpened(let uri, let address):
            return "controller \(uri) opened" + (address.map { ", address \($0)" } ?? " (it reports no public address)")
        case .peripheralSeen(let device):
            let line = Self.found(device, claim: registry.claim(.advertisement(device.advertisement)))
            let isNew = said.withLock { said -> Bool in
                // Bounded: a flood of invented peripherals starts the memory over, not the process.
                if said.count >= 4096 { said.removeAll() }
                return said.insert(line).inserted
            }
            return isNew ? line : nil
        case .connecting(let address):
            return "connecting to \(Self.address(address))"
        case .connected(let address, let link):
            return "connected to \(Self.address(address)), handle 0x\(Hex.word(link))"
        case .disconnected(let link, let reason):
            return "link 0x\(Hex.word(link)) closed: \(reason)"
        case .mtuExchanged(let link, let mtu):
            return "link 0x\(Hex.word(link)): ATT MTU \(mtu)"
        case .subscribed(let link, let characteristic, let valueHandle, let indications):
            return "link 0x\(Hex.word(link)): subscribed to \(indications ? "indications" : "notifications") of "
                + "\(Self.name(of: characteristic)), handle 0x\(Hex.word(valueHandle))"
        case .attError(let link, let failure):
            return "link 0x\(Hex.word(link)): ATT error 0x\(Hex.byte(failure.code)) \(ATTErrorCode.describe(failure.code)) "
                + "for \(ATTPDU.name(ofOpcode: failure.requestOpcode)) (opcode 0x\(Hex.byte(failure.requestOpcode))), "
                + "handle 0x\(Hex.word(failure.handle))"
                + (failure.code == ATTErrorCode.attributeNotFound && Self.discoveryOpcodes.contains(failure.requestOpcode)
                   ? ": the end of a discovery, as the protocol has it" : "")
        }
    }

    /// `found C0:FF:EE:00:4F:2A (random) "Mirror 4F2A" -50 dBm: mirror-v1 by service …`
    static func found(_ device: DiscoveredDevice, claim: Claim?) -> String {
        var line = "found \(address(device.address))"
        if let resolvedFrom = device.resolvedFrom { line += " resolved from \(resolvedFrom)" }
        if let name = device.name { line += " \"\(name)\"" }
        line += " \(device.rssi) dBm: "
        if let claim { return line + claim.reason }
        let services = device.advertisement.allServiceUUIDs.map(\.description)
        return line + "no driver claims it" + (services.isEmpty ? "" : " (services \(services.joined(separator: ", ")))")
    }

    static func address(_ address: BLEAddress) -> String { "\(address) (\(address.kind.rawValue))" }

    /// Discovery walks a range until the peer answers Attribute Not Found: that answer is normal.
    static let discoveryOpcodes: Set<UInt8> = [0x04, 0x06, 0x08, 0x10]

    /// A characteristic's name where the Bluetooth SIG or our profiles give it one, with its UUID
    /// (the names are `BluetoothNames`', the same ones `gatt` prints).
    static func name(of uuid: BluetoothUUID) -> String {
        guard let name = BluetoothNames.bench.qualifiedName(of: uuid) else { return uuid.description }
        return "\(name) (\(uuid))"
    }
}
