import AlertModel
import AlertPolicy
import AlertStore
import AlertTestSupport
import Foundation
import Synchronization
import Testing

@testable import AlertOutbox
@testable import AlertSinks

/// The time of day stepped back or forward (by an administrator, NTP, a VM resumed) while a
/// sink is rate limited or retrying: intervals run on the monotonic clock, so deliveries go on
/// as if nothing happened. The outbox's own times follow the stepped clock.
@Suite struct ClockStepTests {
    /// The real time of day plus a step the test sets.
    final class SteppedWallClock: Sendable {
        private let step = Atomic<Int64>(0)
        func move(by milliseconds: Int64) { step.add(milliseconds, ordering: .relaxed) }
        var read: @Sendable () -> Int64 {
            { Int64(Date().timeIntervalSince1970 * 1000) + self.step.load(ordering: .relaxed) }
        }
    }

    private func dispatcher(
        _ sink: ScriptedSink, _ store: StateStore, wall: SteppedWallClock,
        intervals: any Clock<Duration> = ContinuousClock(),
        rate: RateSpec? = nil, maxAge: Int64 = 60_000
    ) async throws -> ReliableDispatcher {
        var configuration = fastConfiguration(maxAge: maxAge)
        if let rate { configuration.rates[sink.name] = rate }
        let dispatcher = ReliableDispatcher(
            sinks: [sink.name: sink], durable: [sink.name], outbox: store.outbox,
            configuration: configuration, clock: wall.read, intervals: intervals)
        try await dispatcher.start()
        return dispatcher
    }

    @Test func aRateLimitedSinkKeepsDeliveringAfterAStepBack() async throws {
        let store = try openStore()
        defer { store.close() }
        let wall = SteppedWallClock()
        let sink = ScriptedSink(name: "hook")
        let dispatcher = try await dispatcher(sink, store, wall: wall, rate: RateSpec(count: 1, per: 200))
        await dispatcher.dispatch(sampleAlert("first", notify: ["hook"]))
        #expect(await eventually { sink.delivered.count == 1 })
        wall.move(by: -3_600_000)
        await dispatcher.dispatch(sampleAlert("second", notify: ["hook"]))
        #expect(
            await eventually(timeout: .seconds(30)) { sink.delivered.count == 2 },
            "the rate held the second alert back for the size of the step")
        #expect(await dispatcher.drain(timeout: .seconds(30)))
    }

    @Test func aRetryFallsDueAfterItsBackoffAcrossAStepBack() async throws {
        let store = try openStore()
        defer { store.close() }
        let wall = SteppedWallClock()
        let sink = ScriptedSink(name: "hook", script: [.retry(reason: "busy", after: 500)])
        let dispatcher = try await dispatcher(sink, store, wall: wall)
        await dispatcher.dispatch(sampleAlert("a", notify: ["hook"]))
        #expect(await eventually { await dispatcher.counts()["hook"]?.retried == 1 })
        wall.move(by: -3_600_000)
        #expect(
            await eventually(timeout: .seconds(30)) { sink.delivered.count == 1 },
            "the retry waited for the size of the step")
        #expect(sink.attempts == 2)
        #expect(await dispatcher.drain(timeout: .seconds(30)))
    }

    /// A day forward is no day of retrying: the alert, failing again after the step, is under
    /// a second old, not past its `maxAge`, and is retried once more.
    @Test func aStepForwardDoesNotTurnARetryIntoADeadLetter() async throws {
        let store = try openStore()
        defer { store.close() }
        let wall = SteppedWallClock()
        let sink = ScriptedSink(
            name: "hook", script: [.retry(reason: "busy", after: 300), .retry(reason: "busy", after: 10)])
        let dispatcher = try await dispatcher(sink, store, wall: wall, maxAge: 600_000)
        await dispatcher.dispatch(sampleAlert("a", notify: ["hook"]))
        #expect(await eventually { await dispatcher.counts()["hook"]?.retried == 1 })
        wall.move(by: 86_400_000)
        #expect(
            await eventually {
                let dead = await dispatcher.counts()["hook"]?.dead ?? 0
                return sink.delivered.count == 1 || dead > 0
            })
        #expect(sink.delivered.count == 1)
        #expect(sink.attempts == 3)
        #expect(await dispatcher.counts()["hook"]?.dead == 0)
        #expect(await dispatcher.drain(timeout: .seconds(30)))
    }

    /// The rate's window is measured on the injected clock alone: an hour of it passes in an
    /// instant of real time, and the second alert leaves then.
    @Test func theRateRunsOnTheInjectedClock() async throws {
        let store = try openStore()
        defer { store.close() }
        let clock = ManualClock()
        let sink = ScriptedSink(name: "hook")
        let dispatcher = try await dispatcher(
            sink, store, wall: SteppedWallClock(), intervals: clock,
            rate: RateSpec(count: 1, per: 3_600_000))
        await dispatcher.dispatch(sampleAlert("first", notify: ["hook"]))
        #expect(await eventually { sink.delivered.count == 1 })
        await dispatcher.dispatch(sampleAlert("second", notify: ["hook"]))
        try await dispatcher.commit()
        clock.advance(by: .seconds(3_599))
        #expect(sink.delivered.map(\.rule) == ["first"])
        clock.advance(by: .seconds(1))
        #expect(await eventually { sink.delivered.count == 2 })
        #expect(sink.delivered.map(\.rule) == ["first", "second"])
        #expect(await dispatcher.drain(timeout: .seconds(30)))
    }

    /// A row stamped just before the time of day was set back an hour, and handed to the worker
    /// just after: it is due at once (its stamp said so), not an hour later; its age is 0, and a
    /// retry keeps at most the wait it was given.
    @Test func aRowStampedBeforeAStepBackIsNotHeldForTheStep() {
        let stamped: Int64 = 1_700_000_000_000, wall = stamped - 3_600_000, now: Int64 = 5_000
        let fresh = OutboxEntry(
            id: 1, sink: "hook", delivery: .event(sampleAlert(notify: ["hook"])),
            createdAt: stamped, nextAttemptAt: stamped)
        let held = SinkWorker.held(fresh, wall: wall, now: now)
        #expect(held.nextAttemptAt == now)
        #expect(held.createdAt == now)
        var retry = fresh
        retry.nextAttemptAt = stamped + 2_000
        #expect(SinkWorker.held(retry, wall: wall, now: now).nextAttemptAt == now + 2_000)
        #expect(SinkWorker.held(retry, wall: stamped + 500, now: now).nextAttemptAt == now + 1_500)
    }
}
