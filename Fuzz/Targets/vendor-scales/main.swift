import BeurerSanitasScale
import FuzzSupport
import HAL
import IcomonScale
import OneByoneScale
import QNScale
import Transports
import YunmaiScale

/// What the vendor scales notify (issue 18), as a conversation: the input is a run of values,
/// each one length byte and then that many bytes (the last cut short where the input ends). Every
/// value goes to every family's frame parser and, in order, to every family's protocol value, so
/// the fuzzer can walk each handshake (a valid 0x12 frame, F1 00, init answers) to the states
/// where weights are read. Nothing may trap, whatever the scale sends.
func values(_ bytes: [UInt8]) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var index = 0
    while index < bytes.count {
        let count = Int(bytes[index])
        index += 1
        let end = min(bytes.count, index + count)
        out.append(Array(bytes[index..<end]))
        index = end
    }
    return out
}

runFuzzer { bytes in
    var qn1 = QNScaleProtocol { 1_700_000_000 }
    _ = try? qn1.subscriptions(available: [QNScaleProtocol.ffe1Frames, QNScaleProtocol.ffe3Unit, QNScaleProtocol.ffe4Time])
    var qn2 = QNScaleProtocol(displayUnit: .pounds) { -5 }
    _ = try? qn2.subscriptions(available: [QNScaleProtocol.fff1Frames, QNScaleProtocol.fff2Commands])
    var icomon = IcomonScaleProtocol { .init(year: 1999, month: 13, day: 40, hour: 25, minute: 61, second: -1) }
    var onebyone = OneByoneScaleProtocol { .init(year: 70000, month: 1, day: 1, hour: 0, minute: 0, second: 0) }
    var yunmai = YunmaiScaleProtocol { Int64.max }
    var beurer = BeurerSanitasScaleProtocol(startByte: 0xE7, wantedUnit: .pounds) { Int64.min }
    _ = icomon.start()
    _ = onebyone.start()
    _ = yunmai.start()
    _ = beurer.start()
    let broadcast = QNBroadcastDriver()
    for value in values(bytes) {
        _ = try? QNFrame(parsing: value)
        _ = IcomonFrame(parsing: value)
        _ = OneByoneFrame(parsing: value)
        _ = YunmaiFrame(parsing: value)
        _ = BeurerSanitasFrame(parsing: value, startByte: 0xF7)
        _ = broadcast.reading(from: Advertisement(manufacturerData: [0xFFFF: value]))
        _ = qn1.received(value, from: QNScaleProtocol.ffe1Frames)
        _ = qn2.received(value, from: QNScaleProtocol.fff1Frames)
        _ = icomon.received(value, from: IcomonScaleProtocol.results)
        _ = onebyone.received(value, from: OneByoneScaleProtocol.frames)
        _ = yunmai.received(value, from: YunmaiScaleProtocol.measurements)
        _ = beurer.received(value, from: BeurerSanitasScaleProtocol.characteristic)
    }
}
