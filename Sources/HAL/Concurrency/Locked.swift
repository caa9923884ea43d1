import Synchronization

/// A value behind a mutex that closures and tasks can share (a `Mutex` itself cannot be captured).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Wraps `value`; from now on it is reached only through the lock.
    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value held exclusively under the mutex; keep it short.
    public func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }

    /// A copy of the value as it is now; it may change the moment after.
    public var value: Value { withLock { $0 } }
}
