import HAL
import Testing

@Suite struct DeviceURITests {
    @Test func parsesEveryKindInTheContract() throws {
        #expect(try DeviceURI(parsing: "hci:0") == .hci(index: 0))
        #expect(try DeviceURI(parsing: "uart:/dev/ttyACM0?baud=1000000&rtscts=1") == .uart(path: "/dev/ttyACM0", baud: 1_000_000, rtscts: true))
        #expect(try DeviceURI(parsing: "uart:/dev/ttyUSB1?rtscts=0") == .uart(path: "/dev/ttyUSB1", baud: 1_000_000, rtscts: false))
        #expect(try DeviceURI(parsing: "tcp:127.0.0.1:9101") == .tcp(host: "127.0.0.1", port: 9101))
        #expect(try DeviceURI(parsing: "v4l2:/dev/video0") == .v4l2(path: "/dev/video0"))
        #expect(try DeviceURI(parsing: "file:/tmp/codes.y4m") == .file(path: "/tmp/codes.y4m", paced: true))
        #expect(try DeviceURI(parsing: "file:/tmp/codes.y4m?pace=max") == .file(path: "/tmp/codes.y4m", paced: false))
        #expect(try DeviceURI(parsing: "usb:045e:028e") == .usb(USBIdentity(vendor: 0x045E, product: 0x028E), bus: nil, address: nil))
        #expect(try DeviceURI(parsing: "usb:045e:028e@1.7") == .usb(USBIdentity(vendor: 0x045E, product: 0x028E), bus: 1, address: 7))
        #expect(try DeviceURI(parsing: "hidraw:/dev/hidraw3") == .hidraw(path: "/dev/hidraw3"))
        #expect(try DeviceURI(parsing: "evdev:/dev/input/event5") == .evdev(path: "/dev/input/event5"))
        #expect(try DeviceURI(parsing: "log:") == .log)
        #expect(try DeviceURI(parsing: "bell:") == .bell)
        #expect(try DeviceURI(parsing: "sim:") == .simulatedBench)
    }

    @Test func printsBackWhatItParsed() throws {
        for text in ["hci:1", "tcp:localhost:9101", "v4l2:/dev/video2", "file:/x.y4m?pace=max", "usb:054c:09cc@3.12", "log:", "sim:"] {
            #expect(try DeviceURI(parsing: text).description == text)
        }
    }

    @Test func rejectsWithAReason() {
        let cases: [(String, String)] = [
            ("bluetooth:0", "unknown device kind"), ("hci:x", "hci:N"), ("tcp:9101", "tcp:HOST:PORT"),
            ("tcp:host:0", "tcp:HOST:PORT"), ("uart:/dev/ttyACM0?baud=fast", "baud"), ("uart:/dev/ttyACM0?parity=1", "unknown option"),
            ("usb:45e:28e", "usb:VID:PID"), ("usb:045e:028e@1", "BUS.ADDR"), ("file:x?pace=slow", "pace=max"),
            ("v4l2:video0", "v4l2:/dev/videoN"), ("hci:0?x=1", "no ?options"), ("nocolon", "SCHEME"),
        ]
        for (text, reason) in cases {
            do {
                _ = try DeviceURI(parsing: text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.description.contains(reason), "\(text): \(error)")
            }
        }
    }

    @Test func familiesGroupTheKinds() throws {
        #expect(try DeviceURI(parsing: "uart:/dev/ttyACM0").family == .hci)
        #expect(try DeviceURI(parsing: "file:/a.y4m").family == .camera)
        #expect(try DeviceURI(parsing: "bell:").family == .haptics)
    }
}
