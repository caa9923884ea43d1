import DualShock4
import HAL
import HALFakes
import Testing
import Xbox360Pad

/// The pad drivers' wire formats, byte for byte, without any device.
@Suite struct PadReportTests {
    @Test func xbox360RumbleAndLedMessagesAreXpads() {
        #expect(Xbox360Report.rumble(RumbleLevel(strong: 0xFF, weak: 0x80)) == [0x00, 0x08, 0x00, 0xFF, 0x80, 0x00, 0x00, 0x00])
        #expect(Xbox360Report.rumble(.off) == [0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(Xbox360Report.led(.rotating) == [0x01, 0x03, 0x0A])
        #expect(Xbox360Report.led(Xbox360RingAnimation.resting) == [0x01, 0x03, 0x06])
    }

    @Test func everyCueColourHasTheDocumentedRingAnimation() {
        for (color, animation) in PadCueExpectations.xboxRing {
            let shown = color.map(Xbox360RingAnimation.showing) ?? Xbox360RingAnimation.resting
            #expect(shown.rawValue == animation, "\(String(describing: color))")
        }
        #expect(Xbox360RingAnimation.showing(IndicatorColor(red: 0, green: 0, blue: 0)) == .off)
        #expect(Xbox360RingAnimation.showing(IndicatorColor(red: 0x80, green: 0x80, blue: 0x80)) == .blinkPrevious)
        #expect(Xbox360RingAnimation.showing(IndicatorColor(red: 0, green: 0x40, blue: 0xFF)) == .blinkPrevious)
    }

    @Test func dualShock4ReportCarriesTheWholeState() {
        let state = DualShock4State(motors: RumbleLevel(strong: 0xE6, weak: 0x73), light: IndicatorColor(red: 1, green: 2, blue: 3))
        let report = DualShock4Report.output(state)
        #expect(report.count == 32)
        #expect(Array(report.prefix(11)) == [0x05, 0x07, 0x00, 0x00, 0x73, 0xE6, 0x01, 0x02, 0x03, 0x00, 0x00])
        #expect(report.dropFirst(11).allSatisfy { $0 == 0 })
        #expect(DualShock4State().light == IndicatorColor(red: 0, green: 0, blue: 0x40))
    }

    @Test func theSchedulersCommandsAreTheExpectedOnes() async throws {
        // The sequence the umockdev tests expect on the wire, checked here against RumbleScheduler
        // itself through the recording fake, so a change to its contract shows up without umockdev.
        for cue in HapticCue.allCases {
            let clock = ScaledClock(speed: 1000)
            let recorder = RecordingActuator(clock: clock)
            try await RumbleScheduler(recorder, clock: clock).play(cue)
            let seen = recorder.commands.map { command -> PadCueExpectations.Command in
                switch command {
                case .rumble(let level, _): .rumble(strong: level.strong, weak: level.weak)
                case .indicate(let color): .indicate(color)
                case .stop: .stop
                }
            }
            #expect(seen == PadCueExpectations.commands(for: cue), "\(cue)")
        }
    }

    @Test func driversRefuseURIsThatAreNotTheirs() {
        #expect(throws: HapticError.unsupported("the Xbox 360 driver opens usb:045e:028e[@BUS.ADDR] URIs, not hidraw:/dev/hidraw0")) {
            _ = try Xbox360PadDriver().openActuator(.hidraw(path: "/dev/hidraw0"))
        }
        #expect(throws: HapticError.unsupported("usb:054c:05c4 is not a wired Xbox 360 pad (usb:045e:028e)")) {
            _ = try Xbox360PadDriver().openActuator(.usb(USBIdentity(vendor: 0x054C, product: 0x05C4), bus: nil, address: nil))
        }
        #expect(throws: HapticError.unsupported("the DualShock 4 driver opens hidraw:/dev/hidrawN URIs, not usb:045e:028e")) {
            _ = try DualShock4Driver().openActuator(.usb(USBIdentity(vendor: 0x045E, product: 0x028E), bus: nil, address: nil))
        }
    }
}
