import Foundation
import HAL
import Transports

/// Yunmai Mini, SE and Signal scales. FFE0 is QN's and Beurer's service too, so, as
/// YunmaiHandler.kt does, the model names claim them.
public struct YunmaiScaleDriver: Driver {
    /// YunmaiHandler.kt: Mini `YUNMAI-SIGNAL…` / `YUNMAI-ISM…`, SE `YUNMAI-ISSE…`.
    public static let namePrefixes = ["YUNMAI-SIGNAL", "YUNMAI-ISM", "YUNMAI-ISSE"]

    /// Sent in the user command; the scale's own body fat figure depends on it.
    public var person: YunmaiScaleProtocol.Person
    /// The unit shown and the opening exchange's deadline.
    public var options: VendorScaleOptions

    /// Defaults: user 1, a 30-year-old 170 cm man, kilograms, and the shared vendor handshake deadline.
    public init(person: YunmaiScaleProtocol.Person = .init(), displayUnit: WeightUnit = .kilograms,
                handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        self.person = person
        options = VendorScaleOptions(displayUnit: displayUnit, handshakeDeadline: handshakeDeadline)
    }

    /// Registry entry: id "yunmai", matching by a name in `namePrefixes` alone (FFE0 is shared).
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "yunmai", name: "Yunmai scale (Mini, SE, Signal)", kind: .scale,
                         rules: Self.namePrefixes.map { .namePrefix($0) })
    }
}

extension YunmaiScaleDriver: GATTScaleDriver {
    /// Runs the user, time and start writes through `VendorScaleSession` on FFE0 and FFE5.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = YunmaiScaleProtocol(person: person, displayUnit: options.displayUnit) { Int64(Date().timeIntervalSince1970) }
        return try await VendorScaleSession.open(logic, services: [YunmaiScaleProtocol.measurementService, YunmaiScaleProtocol.commandService],
                                                 connection: connection, device: device, clock: clock,
                                                 handshakeDeadline: options.handshakeDeadline)
    }
}
