import AlertModel
import AlertOutbox
import AlertRules
import AlertSinks
import AlertStore
import Platform

/// `outbox flush` (Docs/cli.md): everything pending in a state folder's outbox made due now
/// and delivered through the rules' sinks (and their fallbacks) until it is empty or `timeout`
/// has passed; what is left stays in the outbox. Alerts for a sink the rules do not define are
/// said so, once per sink, and stay pending.
public enum OutboxFlush {
    public struct Outcome: Sendable {
        public var delivered: Int
        public var dead: Int
        public var pending: Int
    }

    public enum Failure: Error {
        /// The outbox cannot be read or changed.
        case outbox(any Error)
        /// A sink cannot be set up.
        case sink(any Error)
    }

    public static func run(
        ruleSet: RuleSet, store: StateStore, timeout: Duration, now: Int64
    ) async throws(Failure) -> Outcome {
        try await run(ruleSet: ruleSet, outbox: store.outbox, timeout: timeout, now: now)
    }

    /// The same for any outbox (a PostgreSQL store's too).
    public static func run(
        ruleSet: RuleSet, outbox: any FlushableOutbox, timeout: Duration, now: Int64
    ) async throws(Failure) -> Outcome {
        let waiting: [String]
        do {
            waiting = try await outbox.pendingSinks()
            try await outbox.makeAllDue(now: now)
        } catch {
            throw .outbox(error)
        }
        for name in waiting where ruleSet.sinks[name] == nil {
            StandardError.write(
                "pricealert: warning: the outbox holds alerts for sink \(UserText.single(name)), which the rule files do not define; they stay pending"
            )
        }
        let sinks: [String: any Sink]
        do {
            sinks = try SinkFactory.makeAll(ruleSet.withFallbacks(waiting).compactMap { ruleSet.sinks[$0] })
        } catch {
            throw .sink(error)
        }
        let dispatcher = ReliableDispatcher(
            sinks: sinks, durable: ruleSet.durableSinks(among: sinks.keys),
            outbox: outbox,
            configuration: .init(definitions: ruleSet.sinks.values))
        do {
            try await dispatcher.start()
        } catch {
            throw .outbox(error)
        }
        await dispatcher.drain(timeout: timeout)
        let counts = await dispatcher.counts()
        return Outcome(
            delivered: counts.values.reduce(0) { $0 + $1.delivered },
            dead: counts.values.reduce(0) { $0 + $1.dead },
            pending: await dispatcher.outboxDepth())
    }
}
