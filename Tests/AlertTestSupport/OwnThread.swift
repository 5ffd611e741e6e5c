import Foundation
import Synchronization

/// Blocking work (a read until end of file, say) started at once on a thread of its own, with
/// its result awaited later without holding a thread. The cooperative pool has one thread per
/// core, so a blocking call made on it can starve every other test running in parallel.
public final class OwnThread<T: Sendable>: Sendable {
    private enum State {
        case running
        case waiting(CheckedContinuation<T, Never>)
        case done(T)
    }

    private let state = Mutex(State.running)

    /// Starts `body` now, before the caller goes on.
    public init(_ body: @escaping @Sendable () -> T) {
        Thread { [self] in
            let result = body()
            let waiter: CheckedContinuation<T, Never>? = state.withLock { state in
                defer { state = .done(result) }
                if case .waiting(let continuation) = state { return continuation }
                return nil
            }
            waiter?.resume(returning: result)
        }.start()
    }

    /// What `body` returned, once it has (once only).
    public var value: T {
        get async {
            await withCheckedContinuation { continuation in
                let ready: T? = state.withLock { state in
                    if case .done(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
