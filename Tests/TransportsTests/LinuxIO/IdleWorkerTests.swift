import Dispatch
import Synchronization
import Testing
@testable import LinuxIO

/// The thread that draws the preview only when a core is free.
@Suite struct IdleWorkerTests {
    @Test func runsOnAThreadOfItsOwnAtIdlePriority() async throws {
        let worker = try #require(IdleWorker(label: "idle test"))
        // Any thread may lower itself to SCHED_IDLE (sched(7)).
        #expect(worker.policy == .idle)
        let answer = await worker.run { 6 * 7 }
        #expect(answer == 42)
        worker.close()
        #expect(await worker.run { 1 } == nil)
    }

    @Test func aJobOfferedWhileOneRunsIsRefusedAtOnce() async throws {
        let worker = try #require(IdleWorker(label: "idle busy"))
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        async let first = worker.run { () -> String in
            started.signal()
            gate.wait()
            return "first"
        }
        // The first job is running (blocked on the gate): a second is refused, not queued.
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                started.wait()
                ready.resume()
            }
        }
        #expect(await worker.run { "second" } == nil)
        gate.signal()
        #expect(await first == "first")
        // Free again.
        #expect(await worker.run { "third" } == "third")
    }

    /// A job waiting behind a busy thread (or a starved one) is given up on at once when its task
    /// is cancelled, and never runs.
    @Test func cancellationEndsTheWaitAtOnce() async throws {
        let worker = try #require(IdleWorker(label: "idle starve"))
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let first = Task {
            await worker.run { () -> Int in
                started.signal()
                gate.wait()
                return 1
            }
        }
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                started.wait()
                ready.resume()
            }
        }
        // The first job runs and holds the thread; cancelling its task answers nil straight away.
        first.cancel()
        #expect(await first.value == nil)
        gate.signal()
    }

    @Test func aCancelledTaskOffersNothing() async throws {
        let worker = try #require(IdleWorker(label: "idle cancel"))
        let ran = Mutex(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await worker.run { ran.withLock { $0 = true } }
        }
        #expect(await task.value == nil)
        #expect(ran.withLock { $0 } == false)
    }
}
