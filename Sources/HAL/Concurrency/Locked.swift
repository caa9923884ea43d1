import Synchronization

/// A value behind a mutex that closures and tasks can share (a `Mutex` itself cannot be captured).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }

    public var value: Value { withLock { $0 } }
}
