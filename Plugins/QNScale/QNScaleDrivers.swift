import Foundation
import HAL
import Transports

/// QN / Yolanda scales that take a connection (Renpho, FITINDEX and their rebrands).
///
/// FFE0 and FFF0 are generic vendor services that other families use too (Yunmai and Beurer on
/// FFE0, 1byone on FFF0), so, as openScale's QNHandler.kt does ("require BOTH: QN services AND a
/// QN-family name hint"), a service claims a device only together with a QN-family name.
public struct QNScaleDriver: Driver {
    /// Names QNHandler.kt treats as the QN family: it looks for these anywhere in the name,
    /// ignoring case, and so does the registry's `nameContains`.
    public static let nameParts = ["qn-scale", "renpho-scale", "seb-scale"]

    /// The unit shown and the opening exchange's deadline.
    public var options: VendorScaleOptions

    /// Defaults: kilograms on the display and the shared vendor handshake deadline.
    public init(displayUnit: WeightUnit = .kilograms, handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        options = VendorScaleOptions(displayUnit: displayUnit, handshakeDeadline: handshakeDeadline)
    }

    /// Registry entry: id "qn-scale", matching FFE0 or FFF0 only together with a name in `nameParts`.
    public var descriptor: DriverDescriptor {
        let services = [QNScaleProtocol.ffe0Service, QNScaleProtocol.fff0Service]
        return DriverDescriptor(id: "qn-scale", name: "QN / Yolanda scale (Renpho, FITINDEX …)", kind: .scale,
                                rules: services.flatMap { service in
                                    Self.nameParts.map { MatchRule.allOf([.serviceUUID(service), .nameContains($0)]) }
                                })
    }
}

extension QNScaleDriver: GATTScaleDriver {
    /// Runs the QN handshake through `VendorScaleSession` on FFE0 or FFF0, stamping the time from the system clock.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = QNScaleProtocol(displayUnit: options.displayUnit) { Int64(Date().timeIntervalSince1970) }
        return try await VendorScaleSession.open(logic, services: [QNScaleProtocol.ffe0Service, QNScaleProtocol.fff0Service],
                                                 connection: connection, device: device, clock: clock,
                                                 handshakeDeadline: options.handshakeDeadline)
    }
}

/// QN scales that only broadcast (openScale's QNHandlerBroadcast.kt, "variant 3" of the
/// ES-CS20M family): manufacturer data under company 0xFFFF starting `AA BB`, no connection.
public struct QNBroadcastDriver: Driver {
    /// The driver keeps no state; one instance serves every broadcasting QN scale.
    public init() {}

    /// Registry entry: id "qn-broadcast", matching manufacturer data under 0xFFFF that starts `AA BB`.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "qn-broadcast", name: "QN / Yolanda scale (broadcast)", kind: .scale,
                         rules: [.manufacturer(companyID: QNBroadcastFrame.companyID, prefix: QNBroadcastFrame.magic)])
    }
}

extension QNBroadcastDriver: BroadcastScaleDriver {
    /// The reading in the advertisement's 0xFFFF manufacturer data, or nil when it is not a plausible QN frame.
    public func reading(from advertisement: Advertisement) -> WeightReading? {
        guard let data = advertisement.manufacturerData[QNBroadcastFrame.companyID],
              let frame = QNBroadcastFrame(manufacturerData: data) else { return nil }
        return frame.reading
    }
}
