import Foundation

/// What the process holds right now, read from /proc: after every run the soak checks that file
/// descriptors (sockets included) and threads are back where they were and memory stays flat.
struct ProcessResources: Sendable, Equatable {
    var fileDescriptors: Int
    var threads: Int
    var residentKiB: Int

    /// Threads the runtime may add on its own under load (Dispatch's pool grows when its threads
    /// block, and keeps idle ones a while): a leak shows as a climb past this, run after run.
    static let threadSlack = 2

    static func now() -> ProcessResources {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
        var resident = -1
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            resident = Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return ProcessResources(fileDescriptors: fds, threads: threads, residentKiB: resident)
    }

    /// Waits (briefly, with a deadline) for descriptors and threads to settle back to `baseline`:
    /// closing a socket or ending a reader thread finishes a moment after the call that asked.
    static func settle(to baseline: ProcessResources, within deadline: Duration = .seconds(2)) async -> ProcessResources {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var current = now()
        while clock.now < end && (current.fileDescriptors > baseline.fileDescriptors || current.threads > baseline.threads + threadSlack) {
            try? await Task.sleep(for: .milliseconds(20))
            current = now()
        }
        return current
    }
}

/// What a finished run left behind: descriptors or threads above `baseline`, and the objects
/// in `objects` (name, weak reference) that something still holds.
func leftovers(since baseline: ProcessResources, objects: [(String, WeakBox?)]) async -> [String] {
    var found: [String] = []
    let after = await ProcessResources.settle(to: baseline)
    if after.fileDescriptors > baseline.fileDescriptors { found.append("fds \(baseline.fileDescriptors)→\(after.fileDescriptors)") }
    if after.threads > baseline.threads + ProcessResources.threadSlack { found.append("threads \(baseline.threads)→\(after.threads)") }
    // A task finishing its last step may hold an object a moment longer: wait for that, briefly.
    for _ in 0..<50 where objects.contains(where: { $0.1?.isAlive == true }) { try? await Task.sleep(for: .milliseconds(10)) }
    found += objects.filter { $0.1?.isAlive == true }.map { "\($0.0) still referenced" }
    return found
}

/// Keeps a weak reference, so the soak can tell whether anything (a leftover task, a cycle)
/// still holds an object after its run ended.
struct WeakBox: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
    var isAlive: Bool { object != nil }
}
