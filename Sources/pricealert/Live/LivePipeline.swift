import AlertCore
import AlertFeeds
import AlertRules
import AlertSinks
import Daemon
import Logging

/// Feed ──events──▶ Engine ──alerts──▶ Dispatcher ──▶ Sinks, for `run` and `demo`.
///
/// Three tasks joined by unbounded streams, so data flows one way and nothing upstream ever
/// waits for a sink: the feed yields events, the evaluation loop turns ticks into alerts, the
/// dispatcher delivers them in order (webhook/exec sinks through the outbox when a state folder
/// is in use). On cancellation (SIGTERM, SIGINT, `--duration`) the feed
/// stops first, then every alert already made is delivered (or, for outbox sinks, written to the
/// outbox and given `drainTimeout` to go out) before `run` returns. `monitor` sees every feed
/// event, tick count and alert (metrics, `/healthz`, systemd notifications); it never talks back.
struct LivePipeline: Sendable {
    var ruleSet: RuleSet
    var runner: FeedRunner
    var delivery: AlertDelivery
    var logger: Logger
    var monitor: PipelineMonitor
    /// How long the outbox may take to empty at shutdown (what is left is sent on the next start).
    var drainTimeout: Duration = .seconds(10)

    struct Outcome {
        var stats: Engine.Stats
        var deliveryFailures: Int
    }

    func run() async -> Outcome {
        let (events, feed) = runner.start()
        let (alerts, alertOut) = AsyncStream.makeStream(of: Alert.self)
        let dispatcher = self.delivery
        let delivery = Task {
            var failures = 0
            for await alert in alerts {
                failures += await dispatcher.dispatch(alert)
            }
            return failures
        }

        let monitor = self.monitor
        let watchdog = Task { await monitor.keepWatchdogFed() }
        var evaluation = Evaluation(ruleSet: ruleSet, source: runner.source.name, staleAfter: runner.options.staleAfter,
                                    logger: logger, monitor: monitor, output: alertOut)
        let stopping = "stopping: delivering the alerts in hand (up to \(DurationText.format(drainTimeout.milliseconds)) for the outbox)"
        await withTaskCancellationHandler {
            for await event in events { evaluation.handle(event) }
        } onCancel: {
            monitor.shutdownBegan(status: stopping)
            feed.cancel()
        }
        // Shutdown, in the order systemd expects: stop reading, deliver, save state, return.
        monitor.shutdownBegan(status: stopping)
        feed.cancel()
        watchdog.cancel()
        alertOut.finish()
        var failures = await delivery.value
        failures += await dispatcher.finish(timeout: drainTimeout)
        saveState(evaluation)
        return Outcome(stats: evaluation.stats, deliveryFailures: failures)
    }

    /// The "save state" step of shutdown, after the feed stopped and every alert was handed on,
    /// so the engine no longer changes: persisting engine state (armed pairs, cooldowns, minute
    /// history) to the state folder belongs here. Nothing is saved yet.
    private func saveState(_ evaluation: Evaluation) {}
}

/// The evaluation loop's state: the engine (made when the first market list arrives) and what
/// feed events mean for users.
struct Evaluation {
    let ruleSet: RuleSet
    let source: String
    let staleAfter: Duration
    let logger: Logger
    let monitor: PipelineMonitor
    let output: AsyncStream<Alert>.Continuation
    private(set) var engine: Engine?
    private var dropped = 0
    private var alerts: [Alert] = []

    init(ruleSet: RuleSet, source: String, staleAfter: Duration, logger: Logger, monitor: PipelineMonitor,
         output: AsyncStream<Alert>.Continuation) {
        self.ruleSet = ruleSet
        self.source = source
        self.staleAfter = staleAfter
        self.logger = logger
        self.monitor = monitor
        self.output = output
    }

    var stats: Engine.Stats {
        var stats = engine?.stats ?? Engine.Stats()
        if dropped > 0 { stats.dropped[.malformed, default: 0] += dropped }
        return stats
    }

    mutating func handle(_ event: FeedEvent) {
        if case .ticks = event {} else { monitor.feed(event) }
        switch event {
        case .markets(let markets):
            if let engine {
                engine.replaceMarkets(MarketList(markets))
                logger.info("\(source): market list reloaded: \(markets.count) markets")
            } else {
                let engine = Engine(rules: ruleSet.rules, markets: MarketList(markets))
                self.engine = engine
                logger.info("\(source): \(markets.count) markets, \(ruleSet.rules.count) rules")
                if engine.hasMatchRules, markets.isEmpty {
                    logger.warning("\(source): the market list is empty: 'match' rules apply to nothing")
                }
            }
        case .ticks(let ticks):
            guard let engine else { return }
            var accepted = 0
            for tick in ticks {
                if let reason = engine.process(tick, into: &alerts) { monitor.dropped(reason) } else { accepted += 1 }
            }
            monitor.prices(accepted: accepted)
            for alert in alerts { emit(alert) }
            alerts.removeAll(keepingCapacity: true)
        case .dropped:
            dropped += 1
            event.log(source: source, to: logger)
        case .connected, .disconnected:
            event.log(source: source, to: logger)
        case .stale(let silence):
            event.log(source: source, to: logger)
            emit(FeedAlert.stale(source: source, silentFor: silence, staleAfter: staleAfter,
                                 at: Wallclock.millis(), notify: feedAlertSinks))
        case .recovered(let silence):
            event.log(source: source, to: logger)
            emit(FeedAlert.recovered(source: source, silentFor: silence, at: Wallclock.millis(),
                                     notify: feedAlertSinks))
        }
    }

    private func emit(_ alert: Alert) {
        monitor.alerted(rule: alert.rule)
        output.yield(alert)
    }

    /// Feed alerts go to every sink an enabled rule notifies, in first-use order.
    private var feedAlertSinks: [String] {
        var names: [String] = []
        for rule in ruleSet.rules where rule.enabled {
            for name in rule.notify where !names.contains(name) { names.append(name) }
        }
        return names.isEmpty ? ["stdout"] : names
    }
}
