import Dispatch

/// Runs async code to the end from libFuzzer's synchronous callback (the callback's thread is not
/// one of the concurrency pool's, so waiting on it cannot starve the task).
public func runBlocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}
