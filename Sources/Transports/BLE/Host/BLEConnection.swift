import BLEProtocol
import HAL
import Synchronization

/// One LE link to a peripheral: its ATT bearer and GATT client, and how it ended.
public final class BLEConnection: Sendable {
    /// The controller's connection handle; reused after the link ends, so use `serial` to tell links apart.
    public let handle: UInt16
    /// This link among all the host made: handles are reused, serials never.
    public let serial: Int
    /// The peripheral's address, as the controller reported it on connecting.
    public let peer: BLEAddress
    /// The link's ATT bearer, for raw requests and for all notifications in order.
    public let bearer: ATTBearer
    /// The GATT client over `bearer`: discovery, reads, writes and subscriptions.
    public let gatt: GATTClient
    private weak let host: HCIHost?
    private let ended = Mutex<(reason: DisconnectReason?, waiters: [AsyncStream<DisconnectReason>.Continuation])>((nil, []))

    init(host: HCIHost, serial: Int, handle: UInt16, peer: BLEAddress, clock: any Clock<Duration>, attTimeout: Duration,
         preferredMTU: UInt16 = ATTMTU.preferred, events: HostEventHandler? = nil) {
        self.host = host
        self.serial = serial
        self.handle = handle
        self.peer = peer
        let bearer = ATTBearer(clock: clock, timeout: attTimeout, link: handle, events: events,
                               preferredMTU: preferredMTU) { [weak host] payload throws(BLEError) in
            guard let host else { throw .disconnected(.localHostTerminated) }
            try await host.sendL2CAP(handle: handle, channel: L2CAPFrame.att, payload: payload)
        }
        self.bearer = bearer
        gatt = GATTClient(bearer: bearer)
    }

    /// Why the link ended, once it has.
    public var disconnectReason: DisconnectReason? { ended.withLock { $0.reason } }

    /// Yields the reason once, when the link ends (at once if it already has).
    public func disconnection() -> AsyncStream<DisconnectReason> {
        let (stream, continuation) = AsyncStream.makeStream(of: DisconnectReason.self)
        let reason = ended.withLock { state -> DisconnectReason? in
            if state.reason == nil { state.waiters.append(continuation) }
            return state.reason
        }
        if let reason {
            continuation.yield(reason)
            continuation.finish()
        }
        return stream
    }

    /// Ends the link and returns once the controller confirms it (or the host's disconnect timeout passes).
    public func disconnect() async {
        await host?.disconnect(self)
    }

    func linkClosed(_ reason: DisconnectReason) {
        let waiters = ended.withLock { state -> [AsyncStream<DisconnectReason>.Continuation] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.yield(reason)
            waiter.finish()
        }
        bearer.close(.disconnected(reason))
    }
}
