import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread that watches the input being parsed and calls `onHang` (once) when one has run
/// longer than `budget`: a parser stuck in a loop cannot be interrupted, so the caller decides
/// what to do (print how to reproduce it and exit). A thread, not a task, so it runs even when
/// the parser holds every cooperative thread.
public final class Watchdog: Sendable {
    private let startedAt = Atomic<Int64>(0)
    private let index = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let budgetNanoseconds: Int64
    private let onHang: @Sendable (_ index: Int, _ seconds: Double) -> Void

    public init(budget: Duration, onHang: @escaping @Sendable (Int, Double) -> Void) {
        budgetNanoseconds = budget.nanoseconds
        self.onHang = onHang
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let watchdog = Unmanaged<Watchdog>.fromOpaque(argument!).takeRetainedValue()
                watchdog.watch()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }

    /// Ends the thread within one check interval.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    /// The input being parsed, or the last one.
    public var currentIndex: Int { index.load(ordering: .relaxed) }

    func begin(_ index: Int, at start: Int64) {
        self.index.store(index, ordering: .relaxed)
        startedAt.store(start, ordering: .releasing)
    }

    func end() { startedAt.store(0, ordering: .releasing) }

    private func watch() {
        while !stopped.load(ordering: .relaxed) {
            usleep(50_000)
            let start = startedAt.load(ordering: .acquiring)
            guard start != 0 else { continue }
            let elapsed = Monotonic.nanoseconds() - start
            if elapsed > budgetNanoseconds, startedAt.load(ordering: .acquiring) == start {
                onHang(index.load(ordering: .relaxed), Double(elapsed) / 1e9)
                return
            }
        }
    }
}
