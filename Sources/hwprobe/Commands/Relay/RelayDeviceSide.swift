import BLEProtocol
import HAL
import Peripherals
import Synchronization
import Transports

/// The device's side of `relay`: finds the device's advertising, holds one link to it at a time
/// through the `--to` controller, carries out what the app's side forwards (`RelayForward`) on
/// that link, and tells the app's side (`PeripheralHost.deviceSaid`) everything the device says.
final class RelayDeviceSide: Sendable {
    /// How long the device's advertising is looked for, and how long a lost device has to come back.
    static let findLimit: Duration = .seconds(10)
    /// After the device's first advertisement, how long its scan response is waited for.
    static let scanResponseWait: Duration = .seconds(1)
    /// The largest MTU the device's link offers on the app's behalf (Core Vol 3 Part F §3.2.8).
    static let largestMTU: UInt16 = 517

    let central: BLECentral
    let address: BLEAddress
    /// Whether the `--to` host pairs (or encrypts with a bond) when the device asks for security.
    let secures: Bool
    private let timebase: Timebase
    private let current = Mutex<BLEConnection?>(nil)

    init(central: BLECentral, address: BLEAddress, clock: any Clock<Duration>, secures: Bool) {
        self.central = central
        self.address = address
        self.secures = secures
        timebase = Timebase(clock)
    }

    /// The device's advertising as the `--to` controller hears it: its advertisement and, when
    /// it is scannable, its scan response (at `.zero`), and the address it advertises from.
    func findAdvertising() async throws(CLIFailure) -> (records: [BLECassette.AdvertisingRecord], address: BLEAddress) {
        let wanted = address
        let timebase = timebase
        let outcome: Result<(records: [BLECassette.AdvertisingRecord], address: BLEAddress)?, BLEError>
        do {
            let reports = try await central.host.scan()
            outcome = await withTaskGroup(of: Result<(records: [BLECassette.AdvertisingRecord], address: BLEAddress)?, BLEError>.self) { group in
                group.addTask {
                    var primary: LEAdvertisingReport?
                    var response: LEAdvertisingReport?
                    var primaryAt: Duration?
                    let start = timebase.now
                    do {
                        for try await report in reports where report.address.bytes == wanted.bytes {
                            if report.isScanResponse { response = report } else if primary == nil {
                                primary = report
                                primaryAt = timebase.now - start
                            }
                            guard let first = primary else { continue }
                            let waited = primaryAt.map { timebase.now - start - $0 } ?? .zero
                            if response != nil || !first.scannable || !first.isLegacy || waited >= Self.scanResponseWait { break }
                        }
                    } catch {
                        return .failure(error as? BLEError ?? .transport("\(error)"))
                    }
                    guard let primary else { return .success(nil) }
                    var records = [BLECassette.AdvertisingRecord(at: .zero, kind: BLECassette.AdvertisingKind(primary), rssi: primary.rssi,
                                                                 data: primary.data)]
                    if let response {
                        records.append(BLECassette.AdvertisingRecord(at: .zero, kind: .scanResponse, rssi: response.rssi, data: response.data))
                    }
                    return .success((records, primary.address))
                }
                group.addTask {
                    try? await timebase.sleep(until: timebase.now + Self.findLimit)
                    return .success(nil)
                }
                let first = await group.next() ?? .success(nil)
                group.cancelAll()
                return first
            }
        } catch {
            throw CLIFailure(error)
        }
        switch outcome {
        case .failure(let error): throw CLIFailure(error)
        case .success(nil):
            throw CLIFailure(kind: .device, message: "\(address) was not heard advertising on \(central.uri) within \(Self.findLimit): "
                             + "is it on, in range, and not connected to something else (a phone)?")
        case .success(let found?): return found
        }
    }

    /// What happened on the device's link, for the lines `relay` prints.
    enum Event: Sendable {
        case connected(BLEAddress)
        case mtu(UInt16)
        case disconnected(reason: UInt8)
        /// A connection the app's arrival asked for could not be made.
        case unreachable(String)
        /// The device asked for security (0x05/0x0F) and the link was secured, or not.
        case secured(SecuringOutcome?)
    }

    /// Connects to the device (it has `findLimit` to accept); the link is the one forwards go to.
    func connect(_ peer: BLEAddress) async throws(CLIFailure) -> BLEConnection {
        do {
            let connection = try await central.connect(peer, timeout: Self.findLimit)
            current.withLock { $0 = connection }
            return connection
        } catch {
            throw CLIFailure(kind: .device, message: "could not connect to \(peer) through \(central.uri): \(error)")
        }
    }

    /// Passes what the device says on `connection` to the app's side until the link ends, then
    /// tells it (and `observe`) the reason.
    private func follow(_ connection: BLEConnection, to server: PeripheralHost, observe: @escaping @Sendable (Event) -> Void) {
        let values = connection.bearer.notifications()
        let ended = connection.disconnection()
        Task {
            let notifications = Task {
                for await value in values {
                    server.deviceSaid(value.indicated ? .indicated(handle: value.handle, value: value.value)
                                      : .notified(handle: value.handle, value: value.value))
                }
            }
            var reason = DisconnectReason.remoteUserTerminated
            for await end in ended {
                reason = end
                break
            }
            notifications.cancel()
            current.withLock { if $0 === connection { $0 = nil } }
            let code = Self.hciCode(reason)
            observe(.disconnected(reason: code))
            server.deviceSaid(.disconnected(reason: code))
        }
    }

    /// Ends the device's link, if one is up (the app left, or the relay stops).
    func endLink() async {
        let connection = current.withLock { $0 }
        await connection?.disconnect()
    }

    /// Carries out forwards in order (a connection first, then one ATT request outstanding at a
    /// time, as the app sends them) and feeds each outcome back to the app's side.
    func carryOut(_ forwards: AsyncStream<RelayForward>, to peer: BLEAddress, for server: PeripheralHost,
                  observe: @escaping @Sendable (Event) -> Void) async {
        for await forward in forwards {
            if forward == .connectDevice {
                do throws(CLIFailure) {
                    let connection = try await connect(peer)
                    observe(.connected(peer))
                    follow(connection, to: server, observe: observe)
                    server.deviceSaid(.connected)
                } catch {
                    observe(.unreachable(error.message))
                    // 0x3E Connection Failed to be Established: the app's link ends.
                    server.deviceSaid(.disconnected(reason: 0x3E))
                }
                continue
            }
            guard let connection = current.withLock({ $0 }) else {
                if case .request(let bytes) = forward { server.deviceSaid(.answered(Self.unlikely(bytes))) }
                continue
            }
            switch forward {
            case .connectDevice:
                break
            case .request(let bytes):
                guard let pdu = try? ATTPDU(parsing: bytes) else {
                    // Malformed for us is malformed for the device too: Invalid PDU, as a server says it.
                    server.deviceSaid(.answered(Self.error(answering: bytes, code: 0x04)))
                    continue
                }
                do throws(BLEError) {
                    var answer = try await Self.ask(pdu, on: connection)
                    // The device wants a secure link: this side's own pairing (or bond), then the request again.
                    if secures, answer.first == ATTPDU.Opcode.errorResponse, answer.count == 5, answer[4] == 0x05 || answer[4] == 0x0F,
                       await central.host.linkSecurity(connection.handle).isEncrypted == false {
                        let outcome = try? await central.host.secure(connection, authenticated: answer[4] == 0x05)
                        observe(.secured(outcome))
                        if outcome.map(Self.succeeded) == true { answer = try await Self.ask(pdu, on: connection) }
                    }
                    server.deviceSaid(.answered(answer))
                } catch {
                    // The device's bearer is done (its 30 s timeout, the link gone): so is the relay's link to it.
                    server.deviceSaid(.answered(Self.unlikely(bytes)))
                    await connection.disconnect()
                }
            case .command(let bytes):
                if let pdu = try? ATTPDU(parsing: bytes) { try? await connection.bearer.command(pdu) }
            case .exchangeMTU(let offered):
                // A device that refuses a second exchange leaves the MTU the link already has.
                let took = (try? await connection.bearer.exchangeMTU(min(offered, Self.largestMTU))) ?? connection.bearer.mtu
                observe(.mtu(took))
                server.deviceSaid(.mtu(took))
            case .endDeviceLink:
                await connection.disconnect()
            }
        }
    }

    /// The device's answer to `pdu`, an Error Response included.
    private static func ask(_ pdu: ATTPDU, on connection: BLEConnection) async throws(BLEError) -> [UInt8] {
        do {
            return try await connection.bearer.request(pdu).encoded
        } catch {
            guard case .att(let failure) = error else { throw error }
            return ATTPDU.errorResponse(requestOpcode: failure.requestOpcode, handle: failure.handle, code: failure.code).encoded
        }
    }

    static func succeeded(_ outcome: SecuringOutcome) -> Bool {
        switch outcome {
        case .paired, .encrypted, .notStored: true
        case .failed, .bondRejected: false
        }
    }

    /// An Error Response to `request` with `code`.
    static func error(answering request: [UInt8], code: UInt8) -> [UInt8] {
        let handle = request.count >= 3 ? UInt16(request[1]) | UInt16(request[2]) << 8 : 0
        return ATTPDU.errorResponse(requestOpcode: request.first ?? 0, handle: handle, code: code).encoded
    }

    /// 0x0E Unlikely Error: what the app gets for a request the device's link ended under.
    static func unlikely(_ request: [UInt8]) -> [UInt8] { error(answering: request, code: 0x0E) }

    /// The HCI reason code a link's end stands for (Core Vol 1 Part F).
    static func hciCode(_ reason: DisconnectReason) -> UInt8 {
        switch reason {
        case .remoteUserTerminated: 0x13
        case .supervisionTimeout, .transportLost: 0x08
        case .localHostTerminated: 0x16
        case .hciError(let code): code
        }
    }
}
