import Glibc
import Testing
@testable import LinuxIO

/// The wake event that lets device threads wait in poll(2) with no timeout.
@Suite struct WakeEventTests {
    func pipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [Int32] = [0, 0]
        #expect(Glibc.pipe(&ends) == 0)
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    @Test func aSignalEndsAWaitThatHasNoTimeout() async throws {
        let (readEnd, writeEnd) = try pipe()
        defer { readEnd.close(); writeEnd.close() }
        let wake = try WakeEvent()
        let waiter = Task.detached { try readEnd.poll(for: .readable, orWake: wake) }
        wake.signal()
        let result = try await waiter.value
        #expect(result.woken)
        #expect(result.events.isEmpty, "the pipe had nothing to read")
    }

    @Test func theDescriptorsEventsAreReportedAndTheWakeStaysQuiet() throws {
        let (readEnd, writeEnd) = try pipe()
        defer { readEnd.close(); writeEnd.close() }
        let wake = try WakeEvent()
        _ = try writeEnd.write(from: UnsafeRawBufferPointer(start: [UInt8(7)], count: 1))
        let result = try readEnd.poll(for: .readable, orWake: wake)
        #expect(result.events.contains(.readable))
        #expect(!result.woken)
        #expect(try readEnd.poll(for: .readable, orWake: wake, timeoutMilliseconds: 0).events.contains(.readable))
    }

    @Test func aTimeoutEndsTheWaitWithNothing() throws {
        let (readEnd, writeEnd) = try pipe()
        defer { readEnd.close(); writeEnd.close() }
        let result = try readEnd.poll(for: .readable, orWake: try WakeEvent(), timeoutMilliseconds: 1)
        #expect(result.events.isEmpty && !result.woken)
    }

    @Test func aSignalStaysUntilCloseAndAfterCloseEveryWaitReturnsWoken() throws {
        let (readEnd, writeEnd) = try pipe()
        defer { readEnd.close(); writeEnd.close() }
        let wake = try WakeEvent()
        wake.signal()
        #expect(try readEnd.poll(for: .readable, orWake: wake, timeoutMilliseconds: 0).woken)
        #expect(try readEnd.poll(for: .readable, orWake: wake, timeoutMilliseconds: 0).woken, "a late waiter still sees it")
        wake.close()
        wake.signal() // harmless once closed
        #expect(try readEnd.poll(for: .readable, orWake: wake).woken)
    }

    @Test func durationsBecomePollTimeoutsRoundedUp() {
        #expect(Duration.zero.pollMilliseconds() == 0)
        #expect(Duration.seconds(-1).pollMilliseconds() == 0)
        #expect(Duration.nanoseconds(1).pollMilliseconds() == 1, "a wait never ends before its deadline")
        #expect(Duration.milliseconds(5).pollMilliseconds() == 5)
        #expect(Duration.microseconds(5_001).pollMilliseconds() == 6)
        #expect(Duration.seconds(90).pollMilliseconds(ceiling: 60_000) == 60_000)
        #expect(Duration.seconds(Int64.max / 2).pollMilliseconds() == Int32.max)
    }

    @Test func aThreadsCPUTimeIsReadAndGrowsWithWork() throws {
        let me = CurrentThread.id
        #expect(me > 0)
        let before = try #require(ThreadCPUTime.nanoseconds(ofThread: me))
        var x: UInt64 = 1
        for i in 0..<3_000_000 { x = x &* 6364136223846793005 &+ UInt64(i) }
        #expect(x != 0)
        let after = try #require(ThreadCPUTime.nanoseconds(ofThread: me))
        #expect(after > before)
        #expect(ThreadCPUTime.nanoseconds(ofThread: -5) == nil)
    }
}
