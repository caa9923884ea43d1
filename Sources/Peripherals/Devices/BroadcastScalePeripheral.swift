import BLEProtocol
import HAL
import Transports

/// A scale that only broadcasts, of whichever family `Device` describes: it accepts no connection
/// and puts each reading in its advertisements (ADV_NONCONN_IND), which it sends only while it is
/// awake, from the first reading after someone steps on until `lingering` after they step off (as
/// these scales wake when stepped on and sleep again soon after).
///
/// Under `automatic` arrival the person steps on at power-up (the bench's way: there is no central
/// to wait for); under `manual` only the controls move them.
package struct BroadcastScalePeripheral<Device: ScaleBroadcastDevice>: ScalePeripheral {
    /// How long a scale goes on advertising after the person stepped off.
    package static var lingering: Duration { .seconds(3) }

    package let address: BLEAddress
    package let name: String?
    package let arrival: ScaleArrival
    package let device: Device
    package var composition: ScaleBodyComposition?
    package private(set) var advertising: VirtualAdvertising
    package private(set) var simulation: ScaleSimulation
    /// What it broadcasts now; nil while it sleeps.
    package private(set) var frame: ScaleBroadcastFrame?
    private var sleepsAt: Duration?
    private var clock = ScaleClock()

    package init(_ device: Device, weightKilograms: Double, composition: ScaleBodyComposition? = nil, address: BLEAddress,
                 name: String? = nil, arrival: ScaleArrival = .automatic, settling: [ScaleSimulation.SettleStep] = ScaleSimulation.settling,
                 interval: Duration = .milliseconds(100), firstAdvertisement: Duration = .milliseconds(250), rssi: Int8 = -61) {
        self.device = device
        self.address = address
        self.name = name ?? device.name
        self.arrival = arrival
        self.composition = composition
        simulation = ScaleSimulation(weightKilograms: weightKilograms, steps: settling)
        if arrival == .automatic { simulation.stepOn() }
        let idle = ScaleBroadcastFrame(reading: ScaleSimulation.Reading(kilograms: 0, stable: false), loadRemoved: false, composition: nil,
                                       time: clock.civil(at: .zero))
        advertising = VirtualAdvertising(form: Self.form(device.advertisement(idle, name: self.name, address: address)), interval: interval,
                                         firstEvent: firstAdvertisement, rssi: rssi, connectable: false)
    }

    /// Everything in the advertisement itself: a broadcaster that is not scannable has no scan response.
    static func form(_ advertisement: Advertisement) -> VirtualAdvertising.Form {
        .legacy(advertisingData: Array(AdvertisingData.encode(advertisement).prefix(31)), scanResponse: [])
    }

    // MARK: ScalePeripheral

    package var driverID: String { Device.driverID }
    package var weightKilograms: Double { simulation.weightKilograms }
    package var display: ScaleSimulation.Reading? { simulation.display }
    package var isOccupied: Bool { simulation.occupied }
    package mutating func stepOn() { simulation.stepOn() }
    package mutating func stepOff() { simulation.stepOff() }
    package mutating func setWeight(_ kilograms: Double) { simulation.setWeight(kilograms) }

    // MARK: VirtualPeripheral

    package var isAdvertising: Bool { frame != nil }

    /// Not expected (the advertising is not connectable); a controller that connects anyway is
    /// hung up on, as the real scale has no GATT server to offer.
    package mutating func linkUp(_ link: VirtualLinkParameters, at now: Duration) -> [PeripheralAction] { [.disconnect(reason: 0x13)] }
    package mutating func received(_ frame: L2CAPFrame, at now: Duration) -> [PeripheralAction] { [] }
    package mutating func linkDown(reason: UInt8, at now: Duration) {}

    package var nextDeadline: Duration? {
        switch (simulation.nextDeadline, sleepsAt) {
        case (let a?, let b?): min(a, b)
        case (let a, let b): a ?? b
        }
    }

    package mutating func advance(to now: Duration) -> [PeripheralAction] {
        for event in simulation.advance(to: now) {
            switch event {
            case .reading(let reading):
                frame = ScaleBroadcastFrame(reading: reading, loadRemoved: false, composition: reading.stable ? composition : nil,
                                            time: clock.civil(at: now))
                sleepsAt = nil
            case .steppedOff(let last):
                guard let last else {
                    frame = nil
                    continue
                }
                frame = ScaleBroadcastFrame(reading: last, loadRemoved: true, composition: nil, time: clock.civil(at: now))
                sleepsAt = now + Self.lingering
            }
        }
        if let sleeps = sleepsAt, sleeps <= now {
            frame = nil
            sleepsAt = nil
        }
        if let frame { advertising.form = Self.form(device.advertisement(frame, name: name, address: address)) }
        return []
    }
}

/// The keys of `hwprobe serve SCALE` for a broadcasting scale: what the person does shows in the
/// next advertisements.
extension BroadcastScalePeripheral: ControllablePeripheral {
    package var controls: [PeripheralControl] { ScaleKeys.controls }
    package var stateSummary: String { ScaleKeys.summary(self) }
    package mutating func perform(_ key: Character, at now: Duration) -> [PeripheralAction] {
        ScaleKeys.perform(key, on: &self)
        return advance(to: now)
    }
}
