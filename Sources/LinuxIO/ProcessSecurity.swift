import CLinuxShims

/// What a process holding secrets asks of the kernel.
package enum ProcessSecurity {
    /// No core file (RLIMIT_CORE 0, soft and hard, so nothing can raise it again) and not
    /// dumpable (PR_SET_DUMPABLE 0: no core, and other users' processes may not ptrace it or read
    /// its /proc files). For the rest of the process: a secret once in memory may linger in
    /// places nobody can wipe (the C library's buffers, a freed page).
    package static func disableCoreDumps() throws(Errno) {
        _ = try check(hal_disable_core_dumps())
    }
}
