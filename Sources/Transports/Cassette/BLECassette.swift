import BLEProtocol
import HAL

/// What a cassette holds of a Bluetooth LE session (`--record FILE`): every peripheral that was
/// heard, and for each one our host connected to, every ATT PDU of every connection with its time
/// from the connection's start. `replay:FILE` plays it back through the virtual controller; the
/// text form is `CassetteFormat` (docs/cassette-format.md).
///
/// Plain values, so a test can build one, compare two, or check what a recording caught. The
/// limits below are the reader's and the recorder's both: a cassette that passes them can be
/// held in memory and played without surprises.
public struct BLECassette: Hashable, Sendable {
    /// Every device heard, one entry per address; the writer orders them by address.
    public var peripherals: [Peripheral]

    /// Builds a cassette, empty by default, as the recorder starts from and tests fill in.
    public init(peripherals: [Peripheral] = []) {
        self.peripherals = peripherals
    }

    /// What bounds a cassette (and what the reader checks before it trusts a number).
    public enum Limits {
        /// Peripherals in one cassette (the host remembers as many in discovery).
        public static let peripherals = 512
        /// Changes of advertising data kept per peripheral.
        public static let advertisingRecords = 4096
        /// Connections kept per peripheral.
        public static let connections = 256
        /// ATT PDUs kept per connection.
        public static let attRecords = 262_144
        /// Security records kept per connection (a pairing, its failure, an encryption: a few).
        public static let securityRecords = 64
        /// The longest ATT PDU (an ATT_MTU of 517, the most Core 5.x allows).
        public static let attPDUBytes = 517
        /// The longest advertising data (extended advertising, Vol 6 Part B §2.3.4.9).
        public static let advertisingBytes = 1650
        /// Legacy advertising PDUs carry at most 31 bytes of data.
        public static let legacyAdvertisingBytes = 31
        /// Times are kept below a day.
        public static let time: Duration = .seconds(86_400)
    }

    /// One device on the air, by its address as it advertised (type included).
    public struct Peripheral: Hashable, Sendable {
        /// The advertised address with its type; a replay advertises under the same one.
        public var address: BLEAddress
        /// Each change of what it advertised, in time order (a repeat of the same bytes is not kept).
        public var advertising: [AdvertisingRecord]
        /// Each connection our host made to it, in time order; empty for devices only heard.
        public var connections: [Connection]
        /// Characteristics whose written values change from run to run (a scan token, the time):
        /// a replay answers a write of another value there without a warning. Never written by
        /// the recorder; a person adds `varying` lines to a cassette.
        public var varying: Set<UInt16>
        /// The identity address `address` resolved to with an IRK our host held, when it is a
        /// resolvable private address our host recognised (format 1.3): kept beside the private
        /// address that was on air, so a replay finds the device by its identity as the live run did.
        public var identity: BLEAddress?

        /// The value handles of the characteristics with these UUIDs, as the recorded discovery
        /// (Read By Type responses for characteristic declarations) found them.
        public func valueHandles(of uuids: Set<BluetoothUUID>) -> [BluetoothUUID: Set<UInt16>] {
            var found: [BluetoothUUID: Set<UInt16>] = [:]
            for connection in connections {
                for record in connection.att where record.direction == .fromPeripheral {
                    guard case .readByTypeResponse(let entries)? = try? ATTPDU(parsing: record.pdu) else { continue }
                    for entry in entries where entry.value.count >= 5 {
                        let uuid = BluetoothUUID(littleEndian: entry.value.dropFirst(3))
                        guard let uuid, uuids.contains(uuid) else { continue }
                        found[uuid, default: []].insert(UInt16(entry.value[1]) | UInt16(entry.value[2]) << 8)
                    }
                }
            }
            return found
        }

        /// Builds a peripheral's record; only the address is required.
        public init(address: BLEAddress, advertising: [AdvertisingRecord] = [], connections: [Connection] = [],
                    varying: Set<UInt16> = [], identity: BLEAddress? = nil) {
            self.address = address
            self.advertising = advertising
            self.connections = connections
            self.varying = varying
            self.identity = identity
        }
    }

    /// The advertising PDU a report came from (Vol 6 Part B §2.3), as the controller reported it.
    public enum AdvertisingKind: String, Hashable, Sendable, CaseIterable {
        /// ADV_IND: connectable and scannable.
        case connectable = "ind"
        /// ADV_DIRECT_IND.
        case directed = "direct-ind"
        /// ADV_SCAN_IND: scannable, not connectable.
        case scannable = "scan-ind"
        /// ADV_NONCONN_IND: a broadcaster.
        case nonConnectable = "nonconn-ind"
        /// SCAN_RSP, the answer to our scan request.
        case scanResponse = "scan-rsp"
        /// An extended advertisement, connectable.
        case extended = "ext"
        /// An extended advertisement, not connectable.
        case extendedNonConnectable = "ext-nonconn"

        /// Whether it came in a legacy advertising PDU rather than an extended one.
        public var isLegacy: Bool { self != .extended && self != .extendedNonConnectable }
        /// The most data a report of this kind carries: 31 bytes in a legacy advertising PDU; a
        /// scan response may come as an extended report (AUX_SCAN_RSP), up to 1650.
        public var maximumData: Int {
            isLegacy && self != .scanResponse ? Limits.legacyAdvertisingBytes : Limits.advertisingBytes
        }
        /// Whether the advertiser accepted connections, so a replay knows to let the host connect.
        public var connectable: Bool { self == .connectable || self == .directed || self == .extended }

        /// The kind of a report as the host stack decoded it.
        public init(_ report: LEAdvertisingReport) {
            if report.isScanResponse { self = .scanResponse }
            else if !report.isLegacy { self = report.connectable ? .extended : .extendedNonConnectable }
            else if report.connectable { self = report.scannable ? .connectable : .directed }
            else { self = report.scannable ? .scannable : .nonConnectable }
        }
    }

    /// One advertising report as recorded: when, which kind, how strong and what data.
    public struct AdvertisingRecord: Hashable, Sendable {
        /// From the start of the recording.
        public var at: Duration
        /// Which advertising PDU the report came from.
        public var kind: AdvertisingKind
        /// The signal strength in dBm the controller reported; 127 means it could not measure.
        public var rssi: Int8
        /// The AD structures as received.
        public var data: [UInt8]

        /// Builds one advertising record, as the recording and the reader do.
        public init(at: Duration, kind: AdvertisingKind, rssi: Int8, data: [UInt8]) {
            self.at = at
            self.kind = kind
            self.rssi = rssi
            self.data = data
        }
    }

    /// One connection our host made to the peripheral.
    public struct Connection: Hashable, Sendable {
        /// From the start of the recording.
        public var at: Duration
        /// Every ATT PDU both ways, in the order the host saw them.
        public var att: [ATTRecord]
        /// How it ended; nil when the recording stopped with the link up.
        public var end: Disconnection?
        /// Pairings and encryptions of the link, in time order (format 1.2): that they happened,
        /// never a key's value.
        public var security: [SecurityRecord]

        /// Builds a connection's record; its PDUs and end are filled in as they happen.
        public init(at: Duration, att: [ATTRecord] = [], end: Disconnection? = nil, security: [SecurityRecord] = []) {
            self.at = at
            self.att = att
            self.end = end
            self.security = security
        }
    }

    /// Something the LE Security Manager did on a connection, as a cassette keeps it: the method
    /// and the kinds of keys each side sent, whether a pairing failed and why, the link becoming
    /// encrypted. A key's value is never kept (a cassette is shared; a key is a secret).
    public struct SecurityRecord: Hashable, Sendable {
        /// What happened.
        public enum Event: Hashable, Sendable {
            /// A pairing by `method` (`just-works`, `passkey`, `numeric-comparison`), Secure
            /// Connections or legacy, with the kinds of keys the device and our host sent
            /// (`ltk`, `ediv-rand`, `irk`, `identity-address`, `csrk`), in the order sent.
            case pairing(method: String, secureConnections: Bool, deviceKeys: [String], hostKeys: [String])
            /// Pairing Failed with this reason (either side sent it).
            case pairingFailed(reason: UInt8)
            /// The link became encrypted (Encryption Change, or Key Refresh, with success).
            case encrypted
        }

        /// From the connection's start.
        public var at: Duration
        /// What happened.
        public var event: Event

        /// Builds one security record.
        public init(at: Duration, event: Event) {
            self.at = at
            self.event = event
        }

        /// The key kinds a cassette names (what ``CassetteRecording`` writes down per PDU).
        public static let keyKinds = ["ltk", "ediv-rand", "irk", "identity-address", "csrk"]
    }

    /// Which way an ATT PDU went, so a replay knows what to expect and what to answer.
    public enum Direction: String, Hashable, Sendable {
        /// From our host to the peripheral: `>` in the text.
        case toPeripheral = ">"
        /// From the peripheral to our host: `<`.
        case fromPeripheral = "<"
    }

    /// One ATT PDU of a connection, with its direction and time.
    public struct ATTRecord: Hashable, Sendable {
        /// From the connection's start.
        public var at: Duration
        /// Who sent it: our host or the peripheral.
        public var direction: Direction
        /// The whole ATT PDU, opcode first, at most `Limits.attPDUBytes`.
        public var pdu: [UInt8]

        /// Builds one ATT record.
        public init(at: Duration, direction: Direction, pdu: [UInt8]) {
            self.at = at
            self.direction = direction
            self.pdu = pdu
        }
    }

    /// How a recorded connection ended: when, on whose side, and the controller's reason.
    public struct Disconnection: Hashable, Sendable {
        /// From the connection's start.
        public var at: Duration
        /// Our host asked for it (`host`), or the peripheral or the air ended it (`peer`).
        public var byHost: Bool
        /// The HCI reason the controller reported (0x13 remote user terminated, 0x08 timeout…).
        public var reason: UInt8

        /// Builds the end of a connection.
        public init(at: Duration, byHost: Bool, reason: UInt8) {
            self.at = at
            self.byHost = byHost
            self.reason = reason
        }
    }

    /// The peripheral recorded at `address` (type included), if any.
    public func peripheral(_ address: BLEAddress) -> Peripheral? {
        peripherals.first { $0.address == address }
    }
}
