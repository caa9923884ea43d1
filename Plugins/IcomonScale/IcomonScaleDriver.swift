import Foundation
import HAL
import Transports

/// LeFu / ICOMON scales of the "MGB" protocol (Swan, Icomon, YG and rebrands).
///
/// FFB0 is shared by other protocols (ActiveEra BF06, Dr Trust, Meditive, Robi S9 in openScale's
/// handlers), so FFB0 claims a device only with one of the names MGBHandler.kt recognises; a bare
/// FFB0 device is listed with a hint instead.
public struct IcomonScaleDriver: Driver {
    /// MGBHandler.kt: a lower-cased name starting with "swan", or exactly "icomon" or "yg".
    public static let namePrefixes = ["Swan", "SWAN", "swan", "icomon", "ICOMON", "Icomon", "YG"]

    /// Sex, age and height sent in the `FB` packet, which the scale's own body fat figure depends on.
    public var person: IcomonScaleProtocol.Person
    /// The unit shown and the opening exchange's deadline.
    public var options: VendorScaleOptions

    /// Defaults: a 30-year-old 170 cm man, kilograms, and the shared vendor handshake deadline.
    public init(person: IcomonScaleProtocol.Person = .init(), displayUnit: WeightUnit = .kilograms,
                handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        self.person = person
        options = VendorScaleOptions(displayUnit: displayUnit, handshakeDeadline: handshakeDeadline)
    }

    /// Registry entry: id "icomon-mgb", matching FFB0 only together with a name in `namePrefixes`.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "icomon-mgb", name: "LeFu / ICOMON scale (MGB protocol: Swan, Icomon, YG)", kind: .scale,
                         rules: Self.namePrefixes.map { .allOf([.serviceUUID(IcomonScaleProtocol.service), .namePrefix($0)]) })
    }
}

extension IcomonScaleDriver: GATTScaleDriver {
    /// Runs the MGB configuration through `VendorScaleSession` on FFB0, dating it from the local calendar.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = IcomonScaleProtocol(person: person, displayUnit: options.displayUnit) {
            let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date())
            return .init(year: parts.year ?? 2000, month: parts.month ?? 1, day: parts.day ?? 1,
                         hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0)
        }
        return try await VendorScaleSession.open(logic, services: [IcomonScaleProtocol.service], connection: connection,
                                                 device: device, clock: clock, handshakeDeadline: options.handshakeDeadline)
    }
}
