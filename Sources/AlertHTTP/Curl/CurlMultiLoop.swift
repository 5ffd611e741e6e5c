import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one thread that drives libcurl's multi handle: it adds queued transfers, runs
/// `curl_multi_perform`, completes finished transfers and sleeps in `curl_multi_poll` until a
/// socket is ready, a timer expires or `curl_multi_wakeup` is called.
///
/// A dedicated thread, not a task: `curl_multi_poll` blocks, and the cooperative pool has only
/// as many threads as cores; holding one for the client's whole life would starve other tasks.
///
/// `@unchecked Sendable` because `multi` and `active` are touched only by the loop thread (and
/// by `deinit`, after that thread has ended); the one cross-thread libcurl call,
/// `curl_multi_wakeup`, is documented as thread-safe and is made with the mutex held and only
/// while the loop has not stopped. Everything else shared lives in `state`, a `Mutex`.
final class CurlMultiLoop: @unchecked Sendable {
    private struct State {
        var incoming: [CurlTransfer] = []
        var cancelled: [UInt64] = []
        var stopping = false
        var thread: pthread_t?
    }

    static let maxIdleConnections = 64

    private let multi: UnsafeMutableRawPointer
    private let state = Mutex(State())
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    /// Only once `curlUnavailable` is nil.
    init() {
        guard let multi = pa_curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        // Keep up to this many idle connections whatever the number of transfers in flight
        // (libcurl's default, 4 per added handle, shrinks as load drops and closes live ones).
        _ = pa_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.maxIdleConnections)
    }

    deinit {
        pa_curl_multi_cleanup(multi)
    }

    /// Starts the thread. The thread keeps the loop alive until it ends.
    func start() {
        let retained = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let loop = Unmanaged<CurlMultiLoop>.fromOpaque(argument!).takeRetainedValue()
                loop.run()
                return nil
            }, retained)
        guard rc == 0 else { fatalError("pthread_create failed: \(rc)") }
        state.withLock { $0.thread = thread }
    }

    /// Queues `transfer`; false once the loop is stopping (the transfer is then still the caller's).
    func submit(_ transfer: CurlTransfer) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.incoming.append(transfer)
            pa_curl_multi_wakeup(multi)
            return true
        }
    }

    /// Asks the loop to abort transfer `id` (its task was cancelled). Harmless if it already ended.
    func cancel(_ transfer: CurlTransfer) {
        transfer.cancelRequested.store(true, ordering: .sequentiallyConsistent)
        state.withLock { state in
            guard !state.stopping else { return }
            state.cancelled.append(transfer.id)
            pa_curl_multi_wakeup(multi)
        }
    }

    /// Fails whatever is in flight with "shut down" and ends the thread; waits for it unless
    /// called on the loop thread itself. Later calls return at once.
    func shutdown() {
        let thread: pthread_t? = state.withLock { state in
            guard !state.stopping else { return nil }
            state.stopping = true
            pa_curl_multi_wakeup(multi)
            return state.thread
        }
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    // MARK: The loop thread

    private func run() {
        while true {
            let (incoming, cancelled, stopping) = state.withLock { state in
                defer { state.incoming.removeAll(); state.cancelled.removeAll() }
                return (state.incoming, state.cancelled, state.stopping)
            }
            if stopping {
                for transfer in incoming { transfer.fail("HTTP client shut down") }
                for (easy, transfer) in active {
                    pa_curl_multi_remove_handle(multi, easy)
                    transfer.fail("HTTP client shut down")
                }
                active.removeAll()
                return
            }
            for transfer in incoming { add(transfer) }
            for id in cancelled { abort(id) }
            var running: Int32 = 0
            _ = pa_curl_multi_perform(multi, &running)
            completeFinished()
            _ = pa_curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func add(_ transfer: CurlTransfer) {
        if transfer.cancelRequested.load(ordering: .sequentiallyConsistent) {
            transfer.fail("request cancelled")
        } else if pa_curl_multi_add_handle(multi, transfer.easy) != CURLM_OK {
            transfer.fail("curl_multi_add_handle failed")
        } else {
            active[transfer.easy] = transfer
        }
    }

    private func abort(_ id: UInt64) {
        guard let (easy, transfer) = active.first(where: { $0.value.id == id }).map({ ($0.key, $0.value) }) else {
            return
        }
        pa_curl_multi_remove_handle(multi, easy)
        active[easy] = nil
        transfer.fail("request cancelled")
    }

    private func completeFinished() {
        var left: Int32 = 0
        while let message = pa_curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            // Read the message before removing the handle: removal frees it.
            let code = message.pointee.data.result
            pa_curl_multi_remove_handle(multi, easy)
            active.removeValue(forKey: easy)?.complete(code)
        }
    }
}
