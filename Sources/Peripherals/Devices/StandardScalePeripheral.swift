import HAL
import HALFakes

/// A Bluetooth SIG Weight Scale (and, given a body composition, Body Composition) scale as a GATT
/// server: the bench scale that `weigh --hci sim:` and the standard-scale driver meet. See
/// `StandardScaleDevice` for the profile's facts.
package typealias StandardScalePeripheral = GATTScalePeripheral<StandardScaleDevice>

extension GATTScalePeripheral where Device == StandardScaleDevice {
    /// The bench's scale as a `FakeScale` describes it: its advertised name, address and signal,
    /// and its readings as the display's settling once a central subscribes (the weight it settles
    /// to is the last reading's; each reading is sent as a Weight Measurement whatever its stable
    /// mark, the standard having none). `disconnectAfterLast` becomes the scale switching itself
    /// off after its last reading.
    package init(scale: FakeScale, interval: Duration = .milliseconds(100), firstAdvertisement: Duration = .milliseconds(250)) {
        let final = scale.steps.last?.reading
        let weight = final?.kilograms ?? 0
        let settling = scale.steps.map {
            ScaleSimulation.SettleStep(after: $0.after, shortfallKilograms: weight - $0.reading.kilograms, stable: $0.reading.stable == true)
        }
        self.init(StandardScaleDevice(name: scale.device.name ?? "Scale", displayUnit: final?.displayUnit ?? .kilograms),
                  weightKilograms: weight, address: scale.device.address, arrival: .automatic, settling: settling,
                  powerOffAfterSettling: scale.disconnectAfterLast, interval: interval, firstAdvertisement: firstAdvertisement,
                  rssi: scale.device.rssi)
    }
}
