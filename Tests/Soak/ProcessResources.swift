import Foundation

/// What the process holds right now, read from /proc: after every run the soak checks that file
/// descriptors (sockets included) and threads are back where they were and memory stays flat.
struct ProcessResources: Sendable, Equatable {
    var fileDescriptors: Int
    /// What each descriptor points at (`socket:[…]`, `pipe:[…]`, a path), to name a leak.
    var targets: [String: String]
    var threads: Int
    var residentKiB: Int

    /// Threads the runtime may add on its own under load (Dispatch's pool grows when its threads
    /// block, and keeps idle ones a while): a leak shows as a climb past this, run after run.
    static let threadSlack = 2
    static let dispatchEventLoop: Set<String> = ["anon_inode:[eventpoll]", "anon_inode:[eventfd]", "anon_inode:[timerfd]"]

    static func now() -> ProcessResources {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var targets: [String: String] = [:]
        for name in names { targets[name] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "?" }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
        var resident = -1
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            resident = Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return ProcessResources(fileDescriptors: names.count, targets: targets, threads: threads, residentKiB: resident)
    }

    /// Descriptors and threads above `baseline`, as words; empty when there are none.
    /// libdispatch opens its event loop (an epoll, an eventfd, a timerfd) when first needed and
    /// drops it when idle: one more such set may come and go with the runtime; any other descriptor above
    /// the baseline's count is ours. (Numbers are reused, so counts are compared, not numbers.)
    func excess(over baseline: ProcessResources) -> [String] {
        func split(_ resources: ProcessResources) -> (runtime: Int, ours: Int) {
            let runtime = resources.targets.values.filter { Self.dispatchEventLoop.contains($0) }.count
            return (runtime, resources.targets.count - runtime)
        }
        var found: [String] = []
        let (runtimeBefore, oursBefore) = split(baseline)
        let (runtimeAfter, oursAfter) = split(self)
        if oursAfter > oursBefore || runtimeAfter > runtimeBefore + Self.dispatchEventLoop.count {
            let new = targets.filter { baseline.targets[$0.key] != $0.value }.map { "\($0.key)→\($0.value)" }.sorted()
            found.append("fds \(baseline.fileDescriptors)→\(fileDescriptors) [runtime \(runtimeBefore)→\(runtimeAfter), ours \(oursBefore)→\(oursAfter)]: \(new.joined(separator: ", "))")
        }
        if threads > baseline.threads + Self.threadSlack { found.append("threads \(baseline.threads)→\(threads)") }
        return found
    }
}

/// What a finished run left behind: descriptors or threads above `baseline`, and the objects
/// in `objects` (name, weak reference) that something still holds.
func leftovers(since baseline: ProcessResources, objects: [(String, WeakBox?)]) async -> [String] {
    // Closing a socket or ending a reader thread finishes a moment after the call that asked,
    // and a task finishing its last step may hold an object a moment longer: wait for that, briefly.
    let clock = ContinuousClock()
    let end = clock.now + .seconds(2)
    var found: [String] = []
    repeat {
        found = ProcessResources.now().excess(over: baseline) + objects.filter { $0.1?.isAlive == true }.map { "\($0.0) still referenced" }
        if found.isEmpty { break }
        try? await Task.sleep(for: .milliseconds(20))
    } while clock.now < end
    return found
}

/// Keeps a weak reference, so the soak can tell whether anything (a leftover task, a cycle)
/// still holds an object after its run ended.
struct WeakBox: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
    var isAlive: Bool { object != nil }
}
