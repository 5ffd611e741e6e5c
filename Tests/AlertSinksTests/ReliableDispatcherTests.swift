import AlertModel
import AlertOutbox
import AlertSinks
import AlertSinksTesting
import AlertStore
import AlertTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct ReliableDispatcherTests {
    @Test func retryThenSuccessDeliversOnce() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(
            name: "hook",
            script: [
                .retry(reason: "HTTP 500", after: nil),
                .retry(reason: "HTTP 503", after: nil)
            ])
        let dispatcher = try await startedDispatcher(hook, store)
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        try await dispatcher.commit()
        #expect(await eventually { (try? store.outbox.depth()) == 0 })
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.attempts == 3)
        #expect(hook.delivered == [sampleAlert(notify: ["hook"])])
        #expect(await dispatcher.counts()["hook"] == DeliveryCounts(delivered: 1, retried: 2, dead: 0))
    }

    /// On a clock the test drives, the retry of an attempt refused with `Retry-After: 300 ms`
    /// starts 300 ms after the first attempt (the backoff alone would be at most 5 ms).
    @Test func retryAfterIsAMinimum() async throws {
        let store = try openStore()
        defer { store.close() }
        let clock = ManualClock()
        let hook = ScriptedSink(name: "hook", script: [.retry(reason: "HTTP 429", after: 300)], clock: clock)
        let dispatcher = try await startedDispatcher(hook, store, intervals: clock)
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        #expect(await run(clock) { hook.delivered.count == 1 })
        let times = hook.attemptTimes
        #expect(times.count == 2)
        if times.count == 2 { #expect(times[0].duration(to: times[1]) >= .milliseconds(300)) }
        await dispatcher.drain(timeout: .seconds(60))
    }

    @Test func permanentFailureBecomesADeadLetterWithItsReason() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook", script: [.permanent(reason: "HTTP 404 Not Found")])
        let dispatcher = try await startedDispatcher(hook, store)
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        try #require(await eventually { (try? store.outbox.dead().count) == 1 })
        let dead = try store.outbox.dead()[0]
        #expect(
            dead.deadReason == "HTTP 404 Not Found" && dead.sink == "hook"
                && dead.alert == sampleAlert(notify: ["hook"]))
        #expect(try store.outbox.depth() == 0 && hook.attempts == 1)
        await dispatcher.drain(timeout: .seconds(60))
    }

    @Test func tooOldGivesUp() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(
            name: "hook", script: Array(repeating: .retry(reason: "connection refused", after: nil), count: 10_000))
        let dispatcher = try await startedDispatcher(hook, store, fastConfiguration(maxAge: 300))
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        #expect(await eventually { (try? store.outbox.dead().count) == 1 })
        let reason = try #require(try store.outbox.dead().first?.deadReason)
        let attempts = hook.attempts
        #expect(reason == "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") over 300ms: connection refused")
        #expect(hook.delivered.isEmpty)
        await dispatcher.drain(timeout: .seconds(60))
    }

    @Test func eachRulesAlertsArriveInOrderUnderConcurrency() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(
            name: "hook", script: (0..<40).map { $0 % 3 == 0 ? .retry(reason: "HTTP 502", after: nil) : .delivered },
            delay: { .milliseconds(Int.random(in: 0...8)) })
        let dispatcher = try await startedDispatcher(hook, store, fastConfiguration(concurrency: 4))
        let rules = ["r1", "r2", "r3", "r4", "r5", "r6"]
        for time in 1...20 {
            for rule in rules { await dispatcher.dispatch(sampleAlert(rule, time: Int64(time), notify: ["hook"])) }
        }
        #expect(await eventually { hook.delivered.count == 120 })
        for rule in rules {
            #expect(hook.delivered.filter { $0.rule == rule }.map(\.time) == (1...20).map { Int64($0) })
        }
        #expect(hook.maxInFlight <= 4)
        #expect(hook.maxInFlight > 1)
        #expect(Set(hook.delivered.map(\.id)).count == 120)
        await dispatcher.drain(timeout: .seconds(60))
    }

    /// The slow sink holds every alert for an hour. The caller's dispatches return, and the fast
    /// sink gets all five, while the slow one has delivered nothing: neither waited for it.
    @Test(.timeLimit(.minutes(1))) func aSlowSinkDoesNotDelayAnotherOrTheCaller() async throws {
        let store = try openStore()
        defer { store.close() }
        let slow = ScriptedSink(name: "slow", delay: { .seconds(3600) })
        let fast = ScriptedSink(name: "fast")
        let direct = InMemorySink(name: "stdout")
        let dispatcher = ReliableDispatcher(
            sinks: ["slow": slow, "fast": fast, "stdout": direct],
            durable: ["slow", "fast"], outbox: store.outbox,
            configuration: fastConfiguration())
        try await dispatcher.start()
        for time in 1...5 {
            let results = await dispatcher.dispatch(sampleAlert(time: Int64(time), notify: ["slow", "fast", "stdout"]))
            #expect(results.map(\.sink) == ["stdout"])
        }
        #expect(await eventually { fast.delivered.count == 5 })
        #expect(await eventually { slow.attempts >= 1 })
        #expect(slow.delivered.isEmpty && direct.alerts.count == 5)
        // Shutdown leaves what the slow sink has not finished in the outbox.
        #expect(await dispatcher.drain(timeout: .milliseconds(100)) == false)
        #expect(try store.outbox.depth(sink: "slow") == 5)
    }

    @Test func aRestartDeliversWhatTheFirstRunLeft() async throws {
        let folder = StateFolder(path: try temporaryFolder() + "/state")
        let store = try openStore(folder)
        let down = ScriptedSink(
            name: "hook", script: Array(repeating: .retry(reason: "HTTP 503", after: 60_000), count: 3))
        let first = ReliableDispatcher(
            sinks: ["hook": down], durable: ["hook"], outbox: store.outbox,
            configuration: fastConfiguration())
        try await first.start()
        for time in 1...3 { await first.dispatch(sampleAlert(time: Int64(time), notify: ["hook"])) }
        #expect(await eventually { down.attempts == 1 })
        await first.drain(timeout: .milliseconds(50))
        store.close()

        let reopened = try openStore(folder)
        defer { reopened.close() }
        #expect(try reopened.outbox.depth() == 3)
        try reopened.outbox.makeAllDue(now: 0)
        let up = ScriptedSink(name: "hook")
        let second = ReliableDispatcher(
            sinks: ["hook": up], durable: ["hook"], outbox: reopened.outbox,
            configuration: fastConfiguration())
        try await second.start()
        #expect(await second.drain(timeout: .seconds(60)))
        #expect(up.delivered.map(\.time) == [1, 2, 3])
        #expect(try reopened.outbox.depth() == 0)
    }

    @Test func theSameAlertDispatchedTwiceWhileRetriedArrivesOnce() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook", script: [.retry(reason: "timeout", after: 100)])
        let dispatcher = try await startedDispatcher(hook, store)
        let alert = sampleAlert(notify: ["hook"])
        await dispatcher.dispatch(alert)
        #expect(await eventually { hook.attempts == 1 })
        await dispatcher.dispatch(alert)
        #expect(await eventually { (try? store.outbox.depth()) == 0 })
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(hook.delivered == [alert] && hook.attempts == 2)
    }

    @Test func nonDurableSinksAreDeliveredDirectly() async throws {
        let store = try openStore()
        defer { store.close() }
        let direct = InMemorySink(name: "stdout", failure: .permanent(reason: "closed"))
        let dispatcher = ReliableDispatcher(sinks: ["stdout": direct], durable: [], outbox: store.outbox)
        try await dispatcher.start()
        let results = await dispatcher.dispatch(sampleAlert(notify: ["stdout"]))
        #expect(results.map(\.result) == [.permanent(reason: "closed")])
        #expect(try store.outbox.depth() == 0)
        #expect(await dispatcher.counts()["stdout"] == DeliveryCounts(delivered: 0, retried: 0, dead: 1))
    }

    @Test func backoffIsJitteredExponentialAndCapped() {
        let policy = RetryPolicy()
        #expect(policy.delay(attempts: 1, retryAfter: nil, random: { $0.upperBound }) == 1_000)
        #expect(policy.delay(attempts: 4, retryAfter: nil, random: { $0.upperBound }) == 8_000)
        #expect(policy.delay(attempts: 60, retryAfter: nil, random: { $0.upperBound }) == 300_000)
        #expect(policy.delay(attempts: 3, retryAfter: 9_000, random: { $0.lowerBound }) == 9_000)
        #expect(policy.givesUp(createdAt: 0, now: 86_400_000) && !policy.givesUp(createdAt: 1, now: 86_400_000))
        #expect(RetryPolicy.describe(millis: 86_400_000) == "24h")
    }
}

/// A drain that ends a run (`outbox flush`, a daemon's exit) counts only what is really still
/// pending: it commits after the outcome of every attempt it waited for.
@Suite struct DrainAfterOutcomesTests {
    /// Forwards to a real outbox; `record` is slow to hand an outcome over: it holds its thread
    /// until `commit` is called once more (the drain's last commit), or for at most `hold`.
    final class SlowRecordOutbox: ForwardingOutbox {
        let outbox: any DeliveryOutbox
        let commits = EventCounter()
        let hold: TimeInterval
        private let committing = NSCondition()
        private let commitsBeforeRecord = Mutex<Int?>(nil)

        init(_ outbox: any DeliveryOutbox, hold: TimeInterval) {
            self.outbox = outbox
            self.hold = hold
        }

        /// How many commits had started when the outcome was handed to the real outbox.
        var commitsBeforeOutcome: Int? { commitsBeforeRecord.withLock { $0 } }

        func record(
            _ ids: [Int64], _ outcome: OutboxOutcome, committed: @escaping @Sendable (RecordedOutcome) -> Void,
            failed: @escaping @Sendable (any Error) -> Void
        ) {
            committing.lock()
            let seen = commits.count
            let until = Date(timeIntervalSinceNow: hold)
            while commits.count == seen, committing.wait(until: until) {}
            committing.unlock()
            commitsBeforeRecord.withLock { $0 = commits.count }
            outbox.record(ids, outcome, committed: committed, failed: failed)
        }

        func commit() async {
            counted()
            await outbox.commit()
        }

        /// Counts a commit and wakes a `record` waiting for one.
        private func counted() {
            committing.lock()
            commits.record()
            committing.broadcast()
            committing.unlock()
        }

    }

    /// A sink whose one attempt waits until the test opens it.
    final class GatedSink: Sink {
        let name = "hook"
        let entered = EventCounter()
        private let gate = AsyncStream<Void>.makeStream()

        func open() { gate.continuation.finish() }

        func send(_ alert: Alert) async -> SinkResult {
            entered.record()
            for await _ in gate.stream {}
            return .delivered
        }
    }

    /// The attempt ends while the drain waits; its "delivered" is handed to the outbox slowly
    /// (for up to a second, unless the drain commits first). The drain's last commit comes
    /// after it, and the drain finds nothing pending. Before the outcome was handed over ahead
    /// of the attempt counting as ended, the drain committed in between and counted the
    /// delivered row as still pending (`outbox flush` said "1 delivered, 1 still pending").
    @Test func theDrainCommitsAfterTheOutcomeOfTheAttemptItWaitedFor() async throws {
        let store = try openStore()
        defer { store.close() }
        let outbox = SlowRecordOutbox(store.outbox, hold: 1)
        let hook = GatedSink()
        let dispatcher = ReliableDispatcher(
            sinks: ["hook": hook], durable: ["hook"], outbox: outbox, configuration: fastConfiguration())
        try await dispatcher.start()
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        try await hook.entered.wait(for: 1)
        let drained = Task { await dispatcher.drain(timeout: .seconds(60)) }
        // The drain's first commit: it is waiting for the attempt now.
        try await outbox.commits.wait(for: 1)
        hook.open()
        #expect(await drained.value)
        // The outcome went to the outbox before the drain's last commit started.
        let before = try #require(outbox.commitsBeforeOutcome)
        #expect(before < outbox.commits.count, "outcome after \(before) of \(outbox.commits.count) commits")
        #expect(try await dispatcher.outboxDepth() == 0)
        #expect(try store.outbox.depth() == 0)
    }
}

/// A dead outcome whose rows another deliverer settled meanwhile (its claim ran out during the
/// attempt, and the other one delivered them): no dead letter is written, none is counted, and
/// the worker says why.
@Suite struct DeadLettersCountedOnceWrittenTests {
    /// Forwards to a real outbox; before a dead outcome it records the rows as delivered, as
    /// another deliverer that claimed them after this attempt's claim ran out would.
    final class SettledElsewhereOutbox: ForwardingOutbox {
        let outbox: any DeliveryOutbox

        init(_ outbox: any DeliveryOutbox) { self.outbox = outbox }

        func record(
            _ ids: [Int64], _ outcome: OutboxOutcome, committed: @escaping @Sendable (RecordedOutcome) -> Void,
            failed: @escaping @Sendable (any Error) -> Void
        ) {
            if case .dead = outcome { outbox.record(ids, .delivered, committed: { _ in }, failed: { _ in }) }
            outbox.record(ids, outcome, committed: committed, failed: failed)
        }

    }

    @Test func aDeadOutcomeForRowsSettledElsewhereIsNoDeadLetter() async throws {
        let store = try openStore()
        defer { store.close() }
        let log = CapturingLogHandler()
        let hook = ScriptedSink(name: "hook", script: [.permanent(reason: "HTTP 410"), .permanent(reason: "HTTP 410")])
        let dispatcher = ReliableDispatcher(
            sinks: ["hook": hook], durable: ["hook"], outbox: SettledElsewhereOutbox(store.outbox),
            configuration: fastConfiguration(), logger: log.logger(label: "delivery"))
        try await dispatcher.start()
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(try store.outbox.dead().isEmpty && store.outbox.depth() == 0)
        #expect(await dispatcher.counts()["hook"] == DeliveryCounts(delivered: 0, retried: 0, dead: 0))
        let said = log.records.filter { $0.message.contains("made no dead letter for 1 of its 1 rows") }
        #expect(said.count == 1 && said.first?.level == .notice, "\(log.records.map(\.message))")
    }

    /// The same outcome on the plain outbox is one dead letter, counted once it is written.
    @Test func aDeadOutcomeIsCountedOnceWritten() async throws {
        let store = try openStore()
        defer { store.close() }
        let hook = ScriptedSink(name: "hook", script: [.permanent(reason: "HTTP 410")])
        let dispatcher = try await startedDispatcher(hook, store)
        await dispatcher.dispatch(sampleAlert(notify: ["hook"]))
        #expect(await dispatcher.drain(timeout: .seconds(60)))
        #expect(try store.outbox.dead().count == 1)
        #expect(await dispatcher.counts()["hook"] == DeliveryCounts(delivered: 0, retried: 0, dead: 1))
    }
}
