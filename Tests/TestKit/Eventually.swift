/// Lets other tasks run, without sleeping and without moving any clock, until `condition` holds;
/// false once `turns` scheduler turns have passed without it. The one patience every test uses:
/// a task a turn behind under load gets there long before a million turns.
public func eventually(turns: Int = 1_000_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<turns {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
