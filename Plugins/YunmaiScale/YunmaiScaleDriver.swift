import Foundation
import HAL
import Transports

/// Yunmai Mini, SE and Signal scales. FFE0 is QN's and Beurer's service too, so, as
/// YunmaiHandler.kt does, the model names claim them.
public struct YunmaiScaleDriver: Driver {
    /// YunmaiHandler.kt: Mini `YUNMAI-SIGNAL…` / `YUNMAI-ISM…`, SE `YUNMAI-ISSE…`.
    public static let namePrefixes = ["YUNMAI-SIGNAL", "YUNMAI-ISM", "YUNMAI-ISSE"]

    public var person: YunmaiScaleProtocol.Person
    public var displayUnit: WeightUnit
    public var handshakeDeadline: Duration

    public init(person: YunmaiScaleProtocol.Person = .init(), displayUnit: WeightUnit = .kilograms,
                handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        self.person = person
        self.displayUnit = displayUnit
        self.handshakeDeadline = handshakeDeadline
    }

    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "yunmai", name: "Yunmai scale (Mini, SE, Signal)", kind: .scale,
                         rules: Self.namePrefixes.map { .namePrefix($0) })
    }
}

extension YunmaiScaleDriver: GATTScaleDriver {
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = YunmaiScaleProtocol(person: person, displayUnit: displayUnit) { Int64(Date().timeIntervalSince1970) }
        return try await VendorScaleSession.open(logic, services: [YunmaiScaleProtocol.measurementService, YunmaiScaleProtocol.commandService],
                                                 connection: connection, device: device, clock: clock,
                                                 handshakeDeadline: handshakeDeadline)
    }
}
