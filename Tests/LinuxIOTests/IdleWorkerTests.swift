import Dispatch
import Glibc
import Synchronization
import Testing
@testable import LinuxIO

/// IdleWorker runs a job on its own thread and returns its value; once closed (or for a task
/// already cancelled) it returns nil at once without running the job; a job running when it is
/// closed still finishes and answers.
@Suite struct IdleWorkerTests {
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Waits, off the cooperative pool, until `semaphore` is signalled.
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                semaphore.wait()
                done.resume()
            }
        }
    }

    @Test func runReturnsTheJobsValueFromAnotherThread() async throws {
        let worker = try #require(IdleWorker(label: "linuxio test"))
        defer { worker.close() }
        #expect([.idle, .lowestNice, .ordinary].contains(worker.policy))
        let answer = await worker.run { () -> (Int, pthread_t) in (6 * 7, pthread_self()) }
        #expect(answer?.0 == 42)
        #expect(answer.map { pthread_equal($0.1, pthread_self()) } == 0, "not the caller's thread")
        // Free again after each job.
        for value in 0..<5 { #expect(await worker.run { value * 2 } == value * 2) }
    }

    @Test func afterCloseRunReturnsNilWithoutRunning() async throws {
        let worker = try #require(IdleWorker(label: "linuxio closed"))
        worker.close()
        worker.close()
        let ran = Flag()
        #expect(await worker.run { ran.set(); return 1 } == nil)
        #expect(!ran.isSet)
    }

    @Test func aJobRunningAtCloseStillAnswers() async throws {
        let worker = try #require(IdleWorker(label: "linuxio closing"))
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        async let first = worker.run { () -> String in
            started.signal()
            gate.wait()
            return "finished"
        }
        await Self.wait(for: started)
        worker.close()
        gate.signal()
        #expect(await first == "finished")
        #expect(await worker.run { "later" } == nil)
    }

    @Test func anAlreadyCancelledTaskGetsNilAndTheJobNeverRuns() async throws {
        let worker = try #require(IdleWorker(label: "linuxio cancel"))
        defer { worker.close() }
        let ran = Flag()
        let task = Task { () -> Int? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await worker.run { ran.set(); return 1 }
        }
        #expect(await task.value == nil)
        #expect(!ran.isSet)
        #expect(await worker.run { 2 } == 2, "the thread was never taken")
    }

    @Test func theLabelMayBeLongerThanAThreadName() async throws {
        let worker = try #require(IdleWorker(label: "a label far longer than fifteen bytes"))
        defer { worker.close() }
        let name = await worker.run { currentThreadName() }
        #expect(name == "a label far lon", "the first 15 bytes, as the kernel keeps them")
    }
}

/// What the preview relies on: the thread runs at idle priority, refuses a job while it is busy
/// rather than queueing it, and a caller whose task is cancelled stops waiting at once.
@Suite struct IdleWorkerSchedulingTests {
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
}
