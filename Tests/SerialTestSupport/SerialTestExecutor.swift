import Foundation
import HAL
import Synchronization

/// Runs every job of the process's global executor on one thread, one at a time, while a test
/// holds it, and knows how many are waiting. With all the work in one queue, "nothing left to
/// run" is exact, so a test moves the manual clock only once the code under test has settled —
/// never while an event that would meet a deadline is still on its way.
///
/// It works through the runtime's global-enqueue hook (the technique of withMainSerialExecutor in
/// swift-concurrency-extras), because `Task {}` inside the code under test does not inherit a
/// task-executor preference.
public final class SerialTestExecutor: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init() {
        let thread = Thread { [unowned self] in self.loop() }
        thread.name = "serial-test-executor"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) { enqueue(UnownedJob(job)) }

    public func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Jobs queued and not yet started (the caller's own job is running, so it is not counted).
    public var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}

private typealias OriginalEnqueue = @convention(thin) (UnownedJob) -> Void
private typealias EnqueueHook = @convention(thin) (UnownedJob, OriginalEnqueue) -> Void

nonisolated(unsafe) private let enqueueGlobalHook: UnsafeMutablePointer<EnqueueHook?>? =
    dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook")?.assumingMemoryBound(to: EnqueueHook?.self)

/// One executor for the whole test process: its thread lives as long as the tests.
public let serialTestExecutor = SerialTestExecutor()

/// One test at a time may own the serial executor.
private let serialOwner = AsyncLock()

/// Runs `body` with every global-executor job on `serialTestExecutor`.
public func withSerialExecutor<T: Sendable>(_ body: () async -> T) async -> T {
    await serialOwner.acquire()
    _ = serialTestExecutor
    enqueueGlobalHook?.pointee = { job, _ in serialTestExecutor.enqueue(job) }
    // The body runs in a task of its own, so it too is on the executor's thread: the test's own
    // task may carry an executor preference (which the hook does not see), and would then run
    // the body beside the jobs it starts, making "settled" inexact.
    let result = await withoutActuallyEscaping(body) { escapable in
        let box = UncheckedBody(run: escapable)
        return await Task { await box.run() }.value
    }
    enqueueGlobalHook?.pointee = nil
    serialOwner.release()
    return result
}

/// Lets every other job run until none is left.
public func settleSerialExecutor() async {
    repeat { await Task.yield() } while serialTestExecutor.queued > 0
}

/// The same for a body that throws.
public func withSerialExecutor<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withSerialExecutor {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
    return try result.get()
}

/// Carries a non-escaping body into the task that runs it; the task is awaited before the body's
/// scope ends, so it never outlives it.
private struct UncheckedBody<T>: @unchecked Sendable {
    let run: () async -> T
}
