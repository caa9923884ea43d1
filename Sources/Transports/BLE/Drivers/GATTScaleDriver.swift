import HAL

/// A scale or mirror driver that works over a GATT connection. The BLE scale transport connects,
/// then hands the link to the driver that claimed the advertisement; the driver turns the
/// device's characteristics into HAL events and commands.
public protocol GATTScaleDriver: Driver {
    func open(_ connection: BLEConnection, device: DiscoveredDevice, clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection
}

extension BLEError {
    /// The HAL error for what a driver's GATT operation met, for `command`.
    public func scaleError(for command: MirrorCommand? = nil) -> ScaleError {
        switch self {
        case .disconnected(let reason): .disconnected(reason)
        case .att(let failure):
            if let command { .refused(command, ScaleError.Refusal(attCode: failure.code)) } else { .protocolViolation(failure.description) }
        case .attTimedOut(let what), .commandTimedOut(let what): .timedOut(what)
        case .connectionTimedOut(let address): .connectionFailed("\(address) did not answer in time")
        case .connectionFailed, .link, .transport: .connectionFailed(description)
        case .notFound(let what): .unsupported("\(what) is missing")
        default: .protocolViolation(description)
        }
    }
}
