import HAL

/// A scale or mirror driver that works over a GATT connection. The BLE scale transport connects,
/// then hands the link to the driver that claimed the advertisement; the driver turns the
/// device's characteristics into HAL events and commands.
public protocol GATTScaleDriver: Driver {
    /// Turns a fresh link into a HAL connection: finds the services, subscribes, runs any opening exchange.
    func open(_ connection: BLEConnection, device: DiscoveredDevice, clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection
}

extension BLEError {
    /// The HAL error for what a driver's GATT operation met, for `command`; an ATT error answering
    /// a command becomes the refusal `refusal` names for its code (a profile's application errors,
    /// 0x80–0x9F, mean what that profile says).
    public func scaleError(for command: MirrorCommand? = nil,
                           refusal: (UInt8) -> ScaleError.Refusal = { .attError($0) }) -> ScaleError {
        switch self {
        case .disconnected(let reason): .disconnected(reason)
        case .att(let failure):
            if let command { .refused(command, refusal(failure.code)) } else { .protocolViolation(failure.description) }
        case .attTimedOut(let what), .commandTimedOut(let what): .timedOut(what)
        case .connectionTimedOut(let address): .connectionFailed("\(address) did not answer in time")
        case .connectionFailed, .link, .transport: .connectionFailed(description)
        case .notFound(let what): .unsupported("\(what) is missing")
        case .pairingFailed, .bondRejected: .notSecured(description)
        default: .protocolViolation(description)
        }
    }
}

extension ScaleError {
    /// What a driver's opening met, as the HAL error: a `ScaleError` as it is, a link error
    /// through `BLEError.scaleError`, anything else a protocol violation naming it. The one
    /// mapping every GATT driver's `open` ends in.
    public static func opening(_ error: any Error) -> ScaleError {
        switch error {
        case let error as ScaleError: error
        case let error as BLEError: error.scaleError()
        default: .protocolViolation("\(error)")
        }
    }
}
