import Foundation
import HAL
import Transports

/// 1byone and Eufy (C1 T9146, P1 T9147, A1 T9120) scales on FFF0. OneByoneHandler.kt knows
/// them by their model codes in the name, wherever they stand, and so do these rules; FFF0
/// alone is QN's too.
public struct OneByoneScaleDriver: Driver {
    /// OneByoneHandler.kt's name tests (lower-cased `contains`).
    public static let nameParts = ["t9146", "t9147", "t9120", "health scale"]

    /// The unit shown and the opening exchange's deadline.
    public var options: VendorScaleOptions

    /// A driver that sets the scale's display to `displayUnit`; the defaults suit a bench session.
    public init(displayUnit: WeightUnit = .kilograms, handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        options = VendorScaleOptions(displayUnit: displayUnit, handshakeDeadline: handshakeDeadline)
    }

    /// Registry entry: id "onebyone-eufy", matching by a name in `nameParts` alone (FFF0 is shared with QN).
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "onebyone-eufy", name: "1byone / Eufy scale (C1, P1, A1)", kind: .scale,
                         rules: Self.nameParts.map { .nameContains($0) })
    }
}

extension OneByoneScaleDriver: GATTScaleDriver {
    /// Runs the unit, clock and stored-measurement exchange through `VendorScaleSession` on FFF0.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = OneByoneScaleProtocol(displayUnit: options.displayUnit) {
            let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date())
            return .init(year: parts.year ?? 2000, month: parts.month ?? 1, day: parts.day ?? 1,
                         hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0)
        }
        return try await VendorScaleSession.open(logic, services: [OneByoneScaleProtocol.service], connection: connection,
                                                 device: device, clock: clock, handshakeDeadline: options.handshakeDeadline)
    }
}
