import Foundation

/// Every child started through `ChildProcess` and not yet reaped, so that a test process that exits without
/// stopping them (a crash in a test, a forgotten `defer`) still kills them: an `atexit` handler SIGKILLs each
/// child's process group. A last resort only; tests stop their own children by pid.
///
/// Thread safety: `pids` is guarded by `lock` (one NSLock for one small table).
final class ChildRegistry: @unchecked Sendable {
    static let shared: ChildRegistry = {
        let registry = ChildRegistry()
        atexit { ChildRegistry.shared.killAll() }
        return registry
    }()

    private let lock = NSLock()
    private var pids: Set<pid_t> = []

    func add(_ pid: pid_t) {
        lock.lock()
        defer { lock.unlock() }
        pids.insert(pid)
    }

    func remove(_ pid: pid_t) {
        lock.lock()
        defer { lock.unlock() }
        pids.remove(pid)
    }

    /// Pids still registered (started and not yet reaped).
    var running: Set<pid_t> {
        lock.lock()
        defer { lock.unlock() }
        return pids
    }

    /// SIGKILLs the process group of every registered child and reaps it.
    func killAll() {
        lock.lock()
        let victims = pids
        pids.removeAll()
        lock.unlock()
        for pid in victims {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
}
