import AlertModel
import AlertOutbox
import AlertSinks
import AlertStore
import AlertTestSupport
import Foundation
import Synchronization

/// A sink that answers from a script (then `.delivered`), optionally after a delay, and records
/// every attempt with its time on `clock` (when given: the one the dispatcher runs on) and every
/// delivered alert in order.
final class ScriptedSink: Sink {
    let name: String
    private let delay: @Sendable () -> Duration
    private let clock: ManualClock?
    private struct State {
        var script: [SinkResult]
        var attempts: [(id: String, at: ManualClock.Instant?)] = []
        var delivered: [Alert] = []
        var inFlight = 0
        var maxInFlight = 0
    }
    private let state: Mutex<State>

    init(
        name: String, script: [SinkResult] = [], delay: @escaping @Sendable () -> Duration = { .zero },
        clock: ManualClock? = nil
    ) {
        self.name = name
        self.delay = delay
        self.clock = clock
        self.state = Mutex(State(script: script))
    }

    var delivered: [Alert] { state.withLock { $0.delivered } }
    /// When each attempt started on `clock`.
    var attemptTimes: [ManualClock.Instant] { state.withLock { $0.attempts.compactMap(\.at) } }
    var attempts: Int { state.withLock { $0.attempts.count } }
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }

    func send(_ alert: Alert) async -> SinkResult {
        let at = clock?.now
        let result = state.withLock { state in
            state.attempts.append((alert.id, at))
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
    ReliableDispatcher.Configuration(
        concurrency: concurrency,
        retry: RetryPolicy(base: 5, cap: 20, maxAge: maxAge), pollInterval: 10)
}

/// A started dispatcher delivering to `hook`, as the durable sink "hook", through `store`'s outbox.
func startedDispatcher(
    _ hook: any Sink, _ store: StateStore,
    _ configuration: ReliableDispatcher.Configuration = fastConfiguration(),
    intervals: any Clock<Duration> = ContinuousClock()
) async throws -> ReliableDispatcher {
    let dispatcher = ReliableDispatcher(
        sinks: ["hook": hook], durable: ["hook"], outbox: store.outbox,
        configuration: configuration, intervals: intervals)
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

/// Runs `clock` for code that sleeps on it until `done` holds: whenever something sleeps on it,
/// moves it to the earliest deadline, so every wait the code asked for passes in full on the
/// clock and in no time for real. Waits on events only (a sleeper, the condition), up to
/// `timeout` of real time; returns whether `done` held.
func run(_ clock: ManualClock, timeout: Duration = .seconds(60), until done: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if await done() { return true }
        if let next = clock.deadlines.first {
            clock.advance(by: clock.now.duration(to: next))
        } else {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
    return await done()
}

/// Forwards every attempt to `sink` (a real one), recording when each started on `clock`.
final class StampedSink: Sink {
    let sink: any Sink
    private let clock: ManualClock
    private let stamps = Mutex<[ManualClock.Instant]>([])

    init(_ sink: any Sink, clock: ManualClock) {
        self.sink = sink
        self.clock = clock
    }

    var name: String { sink.name }
    /// When each attempt started, in order.
    var starts: [ManualClock.Instant] { stamps.withLock { $0 } }

    func send(_ alert: Alert) async -> SinkResult {
        await send(.event(alert))
    }

    func send(_ delivery: Delivery) async -> SinkResult {
        stamps.withLock { $0.append(clock.now) }
        return await sink.send(delivery)
    }
}

/// An outbox that hands everything to a real one (`outbox`); a test's wrapper implements only
/// the calls it changes.
protocol ForwardingOutbox: DeliveryOutbox {
    var outbox: any DeliveryOutbox { get }
}

extension ForwardingOutbox {
    func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void
    ) {
        outbox.enqueue(delivery, sinks: sinks, urgent: urgent, now: now, committed: committed)
    }

    func record(
        _ ids: [Int64], _ outcome: OutboxOutcome, committed: @escaping @Sendable (RecordedOutcome) -> Void,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        outbox.record(ids, outcome, committed: committed, failed: failed)
    }

    func deadLetter(
        _ delivery: Delivery, sink: String, reason: String, now: Int64, failed: @escaping @Sendable (any Error) -> Void
    ) {
        outbox.deadLetter(delivery, sink: sink, reason: reason, now: now, failed: failed)
    }

    func commit() async { await outbox.commit() }
    func loadPending() async throws -> [OutboxEntry] { try await outbox.loadPending() }
    func countPending() async throws -> Int { try await outbox.countPending() }
    func reason(_ error: any Error) -> String { outbox.reason(error) }
}
