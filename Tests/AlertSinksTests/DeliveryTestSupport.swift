import AlertModel
import AlertOutbox
import AlertSinks
import AlertStore
import Foundation
import Synchronization

/// A sink that answers from a script (then `.delivered`), optionally after a delay, and records
/// every attempt with its time and every delivered alert in order.
final class ScriptedSink: Sink {
    let name: String
    private let delay: @Sendable () -> Duration
    private struct State {
        var script: [SinkResult]
        var attempts: [(id: String, at: ContinuousClock.Instant)] = []
        var delivered: [Alert] = []
        var inFlight = 0
        var maxInFlight = 0
    }
    private let state: Mutex<State>

    init(name: String, script: [SinkResult] = [], delay: @escaping @Sendable () -> Duration = { .zero }) {
        self.name = name
        self.delay = delay
        self.state = Mutex(State(script: script))
    }

    var delivered: [Alert] { state.withLock { $0.delivered } }
    var attemptTimes: [ContinuousClock.Instant] { state.withLock { $0.attempts.map(\.at) } }
    var attempts: Int { state.withLock { $0.attempts.count } }
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }

    func send(_ alert: Alert) async -> SinkResult {
        let result = state.withLock { state in
            state.attempts.append((alert.id, .now))
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
            return state.script.isEmpty ? SinkResult.delivered : state.script.removeFirst()
        }
        let pause = delay()
        if pause > .zero { try? await Task.sleep(for: pause) }
        state.withLock { state in
            state.inFlight -= 1
            if result == .delivered { state.delivered.append(alert) }
        }
        return result
    }
}

func openStore(_ folder: StateFolder? = nil) throws -> StateStore {
    try StateStore.open(folder ?? StateFolder(path: try temporaryFolder() + "/state"))
}

/// Small numbers so tests take milliseconds: 5 ms backoff base, 10 ms polling.
func fastConfiguration(maxAge: Int64 = 60_000, concurrency: Int = 4) -> ReliableDispatcher.Configuration {
    ReliableDispatcher.Configuration(concurrency: concurrency,
                                     retry: RetryPolicy(base: 5, cap: 20, maxAge: maxAge), pollInterval: 10)
}

/// A started dispatcher delivering to `hook`, as the durable sink "hook", through `store`'s outbox.
func startedDispatcher(_ hook: any Sink, _ store: StateStore,
                       _ configuration: ReliableDispatcher.Configuration = fastConfiguration()) async throws -> ReliableDispatcher {
    let dispatcher = ReliableDispatcher(sinks: ["hook": hook], durable: ["hook"], outbox: store.outbox,
                                        configuration: configuration)
    try await dispatcher.start()
    return dispatcher
}

/// Waits until `condition` holds, up to `timeout` (generous: tests run in parallel on busy
/// cores); returns whether it did. Sleeping between looks suspends, holding no thread.
func eventually(timeout: Duration = .seconds(60), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
