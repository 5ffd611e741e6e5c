import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What pricealert sets for the whole process, in one place, once, before anything else runs:
/// the executable calls `atStart()` first, and so does every test or benchmark that writes to
/// pipes or runs exec sinks. No type changes process-wide state behind its caller's back (no
/// signal disposition or exit hook is set in an initialiser).
///
/// - SIGPIPE is ignored: writing to a closed pipe (standard output piped to `head`, an exec
///   child that exited without reading its input) is then an `EPIPE` error the writer reports,
///   instead of ending the process.
/// - At exit, every exec child's process group still running is stopped (SIGTERM, then SIGKILL
///   after a grace; `ChildProcess.stopAll`), so no plugin outlives pricealert.
///
/// SIGHUP is left to the daemons (`RuleReload.ignoreUntilListening`): only they re-read rules.
public enum ProcessSetUp {
    /// Sets up the process; later calls do nothing. Safe to call from several threads.
    public static func atStart() {
        _ = once
    }

    /// Whether `atStart()` has run: exec sinks refuse to start a child before it has.
    static var isDone: Bool { done.load(ordering: .acquiring) }

    private static let done = Atomic(false)

    private static let once: Void = {
        signal(SIGPIPE, SIG_IGN)
        atexit { ChildProcess.stopAll() }
        done.store(true, ordering: .releasing)
    }()
}
