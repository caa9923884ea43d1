import HAL

/// The device side of a scale that only broadcasts: how its advertisement carries what its
/// display shows. `BroadcastScalePeripheral` runs it; a family is only its frame layout.
package protocol ScaleBroadcastDevice: Sendable {
    /// The id of the driver that reads these broadcasts (`mi-scale` …).
    static var driverID: String { get }
    /// The name the real device advertises, if it has room for one.
    var name: String? { get }
    /// The advertisement (at most 31 bytes of advertising data, no scan response) while the
    /// display shows `shown`.
    func advertisement(_ shown: ScaleBroadcastFrame, name: String?, address: BLEAddress) -> Advertisement
}

/// What a broadcasting scale puts on the air: the display, and the moment it was measured.
package struct ScaleBroadcastFrame: Hashable, Sendable {
    package var reading: ScaleSimulation.Reading
    /// The person stepped off: the frame repeats the last weight with the scale's "removed" mark.
    package var loadRemoved: Bool
    /// The person's composition, with a stable reading (nil otherwise).
    package var composition: ScaleBodyComposition?
    /// The scale's clock when the reading was taken.
    package var time: ScaleClock.Civil
}
