import HAL
import HALFakes
import Testing
@_spi(Fuzzing) @testable import Transports

/// The bearer on its own (no host to stop reading): a subscriber that takes nothing keeps at most
/// `ATTBearer.subscriberLimit` values, the newest, and the bearer counts what it let go: bounded
/// memory, and a number a consumer can report instead of a silent gap. (The host's waiting for
/// slow subscribers is HostOverControllerTests'.)
@Suite struct SlowSubscriberTests {
    /// A Handle Value Notification of `value` on `handle`.
    static func notification(_ handle: UInt16, _ value: UInt16) -> [UInt8] {
        [0x1B, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    @Test func aSubscriberThatDoesNotKeepUpKeepsTheNewestAndTheRestIsCounted() async {
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { _ throws(BLEError) in }
        let values = bearer.values(of: 0x0010)
        let total = ATTBearer.subscriberLimit + 500
        for n in 0..<total { bearer.receive(Self.notification(0x0010, UInt16(n))) }
        #expect(bearer.notificationsReceived == total)
        #expect(bearer.notificationsDropped == 500)
        bearer.close(.disconnected(.remoteUserTerminated))
        var seen: [Int] = []
        for await value in values { seen.append(Int(value[0]) | Int(value[1]) << 8) }
        #expect(seen == Array(500..<total), "the newest values are kept, in order")
    }

    @Test func aSubscriberThatKeepsUpLosesNothing() async {
        let bearer = ATTBearer(clock: ManualClock(), timeout: .seconds(30)) { _ throws(BLEError) in }
        var values = bearer.values(of: 0x0010).makeAsyncIterator()
        for n in 0..<5000 {
            bearer.receive(Self.notification(0x0010, UInt16(n)))
            let value = await values.next()
            #expect(value == [UInt8(n & 0xFF), UInt8(n >> 8)])
        }
        #expect(bearer.notificationsDropped == 0)
    }
}
