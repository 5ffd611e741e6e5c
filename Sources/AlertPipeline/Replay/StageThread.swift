import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One stage of a file replay on a thread of its own (a POSIX thread, not a task: a stage
/// blocks on its hand-offs and on file I/O, which must not hold one of the few threads that
/// run Swift tasks). `join()` waits until the stage's body has returned.
final class StageThread: Sendable {
    private let body: @Sendable () -> Void
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `body` at once; stops the process when no thread can be started.
    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        let retained = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let stage = Unmanaged<StageThread>.fromOpaque(argument!).takeRetainedValue()
                stage.body()
                stage.ended.signal()
                return nil
            }, retained)
        guard rc == 0 else { fatalError("cannot start a thread: \(String(cString: strerror(rc)))") }
        pthread_detach(thread)
    }

    /// Waits until the body has returned; returns at once after the first time.
    func join() {
        ended.wait()
        ended.signal()
    }
}
