import Foundation
import HAL
import Transports

/// Beurer BF700 / BF710 / BF800, Runtastic Libra, Sanitas SBF70, SilverCrest SBF75 and Crane
/// scales of the legacy FFE0 / FFE1 protocol, known by their names as BeurerSanitasHandler.kt
/// knows them (lower-cased `contains`).
public struct BeurerSanitasScaleDriver: Driver {
    /// Names whose scales take start byte 0xF7 (BeurerSanitasHandler.kt's BF700/800/RT Libra).
    public static let f7Names = ["bf-700", "beurer bf700", "bf-800", "beurer bf800", "rt-libra-b", "rt-libra-w", "libra-b", "libra-w"]
    /// Names whose scales take 0xE7 (its BF710 and Sanitas SBF70 / SBF75 / Crane).
    public static let e7Names = ["bf700", "beurer bf710", "sanitas sbf70", "sbf75", "aicdscale1"]

    /// The unit to set on the scale; nil (the default) leaves it as its owner set it.
    public var displayUnit: WeightUnit?
    /// How long the opening exchange may take before `open` gives up.
    public var handshakeDeadline: Duration

    /// By default the scale's unit is left alone and the shared vendor handshake deadline applies.
    public init(displayUnit: WeightUnit? = nil, handshakeDeadline: Duration = VendorScaleSession.handshakeDeadline) {
        self.displayUnit = displayUnit
        self.handshakeDeadline = handshakeDeadline
    }

    /// Registry entry: id "beurer-sanitas", matching any name containing one of `f7Names` or `e7Names`.
    public var descriptor: DriverDescriptor {
        DriverDescriptor(id: "beurer-sanitas", name: "Beurer / Sanitas / SilverCrest scale (legacy FFE0 protocol)", kind: .scale,
                         rules: (Self.f7Names + Self.e7Names).map { .nameContains($0) })
    }

    /// The start byte for a device's name, in BeurerSanitasHandler.kt's order (the F7 names are
    /// tested first, so "beurer bf700" is F7 although it contains "bf700").
    public static func startByte(forName name: String?) -> UInt8 {
        let lower = (name ?? "").lowercased()
        return f7Names.contains { lower.contains($0) } ? 0xF7 : 0xE7
    }
}

extension BeurerSanitasScaleDriver: GATTScaleDriver {
    /// Runs the init, time, status (and unit) exchange on FFE0, the start byte chosen from the device's name.
    public func open(_ connection: BLEConnection, device: DiscoveredDevice,
                     clock: any Clock<Duration>) async throws(ScaleError) -> any ScaleConnection {
        let logic = BeurerSanitasScaleProtocol(startByte: Self.startByte(forName: device.name), wantedUnit: displayUnit) {
            Int64(Date().timeIntervalSince1970)
        }
        return try await VendorScaleSession.open(logic, services: [BeurerSanitasScaleProtocol.service], connection: connection,
                                                 device: device, clock: clock, handshakeDeadline: handshakeDeadline)
    }
}
