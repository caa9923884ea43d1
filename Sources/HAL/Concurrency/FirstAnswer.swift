extension TaskGroup {
    /// The first answer a child gives (a child that returns `nil` has none and is passed over),
    /// after which the other children are cancelled; `fallback` when every child ends without one.
    ///
    /// Why: racing a device against its deadline is how this project waits for anything outside
    /// (a handshake, a discovery window), and each race ended with the same loop written out.
    package mutating func firstAnswer<Answer>(orElse fallback: Answer) async -> Answer where ChildTaskResult == Answer? {
        defer { cancelAll() }
        while let next = await next() {
            if let next { return next }
        }
        return fallback
    }
}
