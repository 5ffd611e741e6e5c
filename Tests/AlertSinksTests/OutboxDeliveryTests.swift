import AlertModel
import AlertOutbox
import AlertSinks
import Dispatch
import Synchronization
import Testing

@testable import AlertStore

/// The delivery path over the group-committed outbox: a row is durable before its delivery
/// starts, dispatch does not wait for the disk, shutdown leaves every outcome on disk, and each
/// sink's own `concurrency` and `retry` settings apply.
@Suite struct OutboxDeliveryTests {
    /// Records, at each attempt, whether the alert's row was already committed to the outbox
    /// (read through another connection, which sees only committed rows).
    final class CommitCheckingSink: Sink {
        let name: String
        let outbox: Outbox
        let seen = Mutex<[Bool]>([])

        init(name: String, outbox: Outbox) {
            self.name = name
            self.outbox = outbox
        }

        func send(_ alert: Alert) async -> SinkResult {
            let committed = ((try? outbox.pending()) ?? []).contains { $0.alert.id == alert.id && $0.sink == name }
            seen.withLock { $0.append(committed) }
            return .delivered
        }
    }

    @Test func everyRowIsCommittedBeforeItsDeliveryStarts() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = CommitCheckingSink(name: "hook", outbox: store.outbox)
        let dispatcher = try await startedDispatcher(hook, store)
        for time in 1...60 {
            await dispatcher.dispatch(sampleAlert("r\(time % 5)", time: Int64(time), notify: ["hook"]))
        }
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.seen.withLock { $0 } == Array(repeating: true, count: 60))
    }

    @Test func dispatchDoesNotWaitForTheDiskAndDeliveryWaitsForTheCommit() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook")
        let dispatcher = try await startedDispatcher(hook, store)
        // A commit that does not end until the gate opens, like an fsync on a stalled disk.
        let gate = DispatchSemaphore(value: 0)
        store.outbox.writer.submit(GroupCommitter.stall(until: gate))
        for time in 1...3 { await dispatcher.dispatch(sampleAlert(time: Int64(time), notify: ["hook"])) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(hook.attempts == 0)
        gate.signal()
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.delivered.map(\.time) == [1, 2, 3])
    }

    @Test func drainLeavesEveryOutcomeOnDisk() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook", script: [.permanent(reason: "HTTP 410")])
        let dispatcher = try await startedDispatcher(hook, store)
        for time in 1...40 {
            await dispatcher.dispatch(sampleAlert("r\(time % 8)", time: Int64(time), notify: ["hook"]))
        }
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        // Read at once, without waiting: the outcomes were committed before drain returned.
        #expect(try store.outbox.depth() == 0)
        #expect(try store.outbox.dead().map(\.deadReason) == ["HTTP 410"])
        #expect(await dispatcher.outboxDepth() == 0)
    }

    /// An alert whose outbox write fails (an insert refused like a full disk) is not sent and
    /// `commit` says so; it is written again while the process runs (every second, without any
    /// other write coming along) and delivered once written.
    @Test func anAlertTheOutboxCannotTakeIsHeldUntilWrittenThenDelivered() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook")
        let dispatcher = try await startedDispatcher(hook, store)
        store.outbox.writer.submit(
            GroupCommitter.execute(
                """
                CREATE TRIGGER full BEFORE INSERT ON outbox BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END
                """))
        let alert = sampleAlert(notify: ["hook"])
        await dispatcher.dispatch(alert)
        await #expect(throws: UnwrittenAlerts.self) { try await dispatcher.commit() }
        let missing = try #require(dispatcher.unwrittenAlerts())
        #expect(missing.ids == [alert.id])
        #expect(missing.reason.hasPrefix("database or disk is full (SQLite error"))
        #expect(try hook.attempts == 0 && store.outbox.depth() == 0)

        store.outbox.writer.submit(GroupCommitter.execute("DROP TRIGGER full"))
        #expect(await eventually { hook.delivered == [alert] })
        try await dispatcher.commit()
        #expect(dispatcher.unwrittenAlerts() == nil)
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.attempts == 1)
    }

    /// Shutdown keeps retrying, after each backoff, until the row is delivered.
    @Test func drainRetriesUntilDelivered() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(
            name: "hook",
            script: [
                .retry(reason: "HTTP 503", after: 100), .retry(reason: "HTTP 429", after: 100),
                .retry(reason: "HTTP 500", after: 100)
            ])
        let dispatcher = try await startedDispatcher(hook, store)
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.delivered == [sampleAlert(notify: ["hook"])] && hook.attempts == 4)
        #expect(try store.outbox.depth() == 0)
    }

    @Test func eachSinkUsesItsOwnConcurrency() async throws {
        let store = try openStore()
        defer { store.close() }
        let one = ScriptedSink(name: "one", delay: { .milliseconds(20) })
        let many = ScriptedSink(name: "many", delay: { .milliseconds(20) })
        var configuration = fastConfiguration(concurrency: 4)
        configuration.sinks = ["one": DeliverySettings(concurrency: 1), "many": DeliverySettings(concurrency: 8)]
        let dispatcher = ReliableDispatcher(
            sinks: ["one": one, "many": many], durable: ["one", "many"],
            outbox: store.outbox, configuration: configuration)
        try await dispatcher.start()
        for time in 1...48 {
            await dispatcher.dispatch(sampleAlert("r\(time % 12)", time: Int64(time), notify: ["one", "many"]))
        }
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(one.delivered.count == 48 && many.delivered.count == 48)
        #expect(one.maxInFlight == 1)
        #expect(many.maxInFlight > 4 && many.maxInFlight <= 8)
    }

    @Test func eachSinkUsesItsOwnMaximumAge() async throws {
        let store = try openStore()
        defer { store.close() }
        let refused = SinkResult.retry(reason: "connection refused", after: nil)
        let short = ScriptedSink(name: "short", script: Array(repeating: refused, count: 10_000))
        let long = ScriptedSink(name: "long", script: Array(repeating: refused, count: 10_000))
        var configuration = fastConfiguration(maxAge: 60_000)
        configuration.sinks = ["short": DeliverySettings(backoff: 5, maxBackoff: 20, maxAge: 300)]
        let dispatcher = ReliableDispatcher(
            sinks: ["short": short, "long": long], durable: ["short", "long"],
            outbox: store.outbox, configuration: configuration)
        try await dispatcher.start()
        await dispatcher.dispatch(sampleAlert(notify: ["short", "long"]))
        #expect(await eventually { (try? store.outbox.dead().count) == 1 })
        let dead = try store.outbox.dead()
        #expect(dead.map(\.sink) == ["short"])
        #expect(dead.first?.deadReason?.hasSuffix("over 300ms: connection refused") == true)
        #expect(try store.outbox.pending().map(\.sink) == ["long"])
        await dispatcher.drain(timeout: .milliseconds(100))
    }

    @Test func aSinksRetrySettingsOverrideTheDefaults() {
        let defaults = RetryPolicy()
        #expect(defaults.applying(DeliverySettings()) == defaults)
        #expect(
            defaults.applying(DeliverySettings(backoff: 2_000, maxBackoff: 60_000, maxAge: 3_600_000))
                == RetryPolicy(base: 2_000, cap: 60_000, maxAge: 3_600_000))
        // A first delay longer than the default cap raises the cap to it.
        #expect(defaults.applying(DeliverySettings(backoff: 600_000)).backoff.cap == .milliseconds(600_000))
        let configuration = ReliableDispatcher.Configuration(definitions: [
            SinkDefinition(
                name: "ops", kind: .exec(ExecSpec(command: ["x"])), delivery: DeliverySettings(maxAge: 5_000))
        ])
        #expect(configuration.sinks == ["ops": DeliverySettings(maxAge: 5_000)])
    }
}
