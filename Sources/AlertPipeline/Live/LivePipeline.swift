import AlertEngine
import AlertFeeds
import AlertModel
import AlertRules
import Logging
import Operations
import ServiceLifecycle
import UnixSignals

/// `run` and `demo`: every long-lived part is a `Service` in one `ServiceGroup`, in data order:
///
///     FeedService ──inbox──▶ EvaluatorService ──hand-over (AlertGate)──▶ DeliveryService ──▶ sinks, outbox
///         RuleReloadService (SIGHUP) ──┤    │ (history to fill)       StatusServer (/metrics, /healthz), WatchdogService
///         BackfillService (candles) ◀──┴────┘
///
/// Data flows one way, through two bounds: the evaluator's `Inbox` holds at most
/// `feedEventsInFlight` feed events (the feed then waits, and frames wait in the socket), and
/// `AlertGate` makes the evaluator wait when a burst leaves `alertsInFlight` alerts on their way
/// to the outbox. Waiting rather than dropping: a dropped frame is a lost price, and a feed kept
/// waiting past its stale limit reconnects like any silent feed.
///
/// SIGTERM, SIGINT, `stop` (`--duration`) or a feed that ends shut the group down in pipeline
/// order (the group stops services in the reverse of their order in it): the backfill's
/// candle request in flight is cancelled, the feed stops (`STOPPING=1`), the evaluator
/// evaluates what the feed gave and hands on the final save, delivery writes every alert to its
/// sink or the outbox, saves, and gives the outbox `drainTimeout`, and the status server stops
/// last. Each service returns only at its turn (the group treats an earlier return as a
/// failure), except the two whose return shuts the group down: the feed when it ends, and
/// `StateFolderWatch` when the state folder is deleted under the run. `monitor` sees every feed event, tick count
/// and alert (metrics, `/healthz`, systemd notifications); it never talks back.
public struct LivePipeline: Sendable {
    public var ruleSet: RuleSet
    public var runner: FeedRunner
    public var delivery: AlertDelivery
    public var logger: Logger
    public var monitor: PipelineMonitor
    /// `/metrics` and `/healthz`, stopped last (nil: no `--listen`).
    public var statusServer: StatusServer?
    /// How long the outbox may take to empty at shutdown (what is left is sent on the next start).
    public var drainTimeout: Duration = .seconds(10)
    /// The rule files SIGHUP re-reads (empty: built-in rules, nothing to re-read).
    public var rulePaths: [String] = []
    /// What makes the rule files be re-read: SIGHUP when nil (a test gives a stream of its own:
    /// a signal sent to a whole test process may land on a thread that ignores it).
    public var reloadRequests: (any AsyncSequence<Void, Never> & Sendable)?
    /// State saved by the previous run, handed to the engine (once).
    public var saved = SavedState([])
    /// How often the state folder is checked to be still in place (`StateFolderWatch`).
    public var stateCheckEvery: Duration = .seconds(1)
    /// How often the engine's changed state is saved (also when a market list arrives, and at shutdown).
    public var saveEvery: Duration = .seconds(60)
    /// After a tick that leaves this many alerts on their way from the engine to the outbox, the
    /// evaluator waits until half of them are dispatched (see `AlertGate`).
    public var alertsInFlight = 1024
    /// Feed events (a frame's ticks, a market list) waiting for the evaluator at most; the feed
    /// reads no more frames meanwhile (see `Inbox`).
    public var feedEventsInFlight = 64
    /// When this returns, the group shuts down as for SIGTERM (`--duration`: a sleep; nil: run
    /// until a signal or until the feed ends).
    public var stop: (@Sendable () async -> Void)?
    /// The signals that shut the group down gracefully (what systemd sends, and Ctrl-C).
    public var shutdownSignals: [UnixSignal] = [.sigterm, .sigint]
    /// One more service, between the evaluator and delivery in the group: stopped after the
    /// evaluator and before delivery drains (the silence watcher). Like every service here it
    /// must return only once the group's graceful shutdown reaches it (`cancelWhenGracefulShutdown`).
    public var silenceWatcher: (any Service)?

    public struct Outcome: Sendable {
        public var stats: Engine.Stats
        public var deliveryFailures: Int
        /// Some alert could not be written to the outbox and was not sent (named on standard
        /// error); the state was not saved after it.
        public var unwritten = false
        /// The state folder was deleted or moved away while the run used it (`StateFolderWatch`):
        /// why (logged as an error); the run stopped.
        public var stateLost: String?
        /// Inputs through the evaluator's inbox (feed events, reloads and fills), and the most that
        /// waited at once (at most `feedEventsInFlight`).
        public var inboxSent = 0
        public var inboxReceived = 0
        public var inboxPeak = 0
    }

    public init(ruleSet: RuleSet, runner: FeedRunner, delivery: AlertDelivery, logger: Logger, monitor: PipelineMonitor)
    {
        self.ruleSet = ruleSet
        self.runner = runner
        self.delivery = delivery
        self.logger = logger
        self.monitor = monitor
    }

    public func run() async throws -> Outcome {
        let inbox = Inbox<EvaluatorInput>(capacity: feedEventsInFlight)
        let (handOver, handOverInput) = AsyncStream.makeStream(of: DeliveryInput.self)
        let gate = AlertGate(limit: alertsInFlight)
        monitor.status.watchOutbox { [delivery] in delivery.unwritten?.description }
        let stopping =
            "stopping: delivering the alerts in hand (up to \(DurationText.format(drainTimeout.milliseconds)) for the outbox)"

        let feed = FeedService(runner: runner, monitor: monitor, stopping: stopping, inbox: inbox)
        let reload = RuleReloadService(
            paths: rulePaths, running: ruleSet, logger: logger, inbox: inbox,
            requests: reloadRequests)
        let (fillRequests, fillRequestsInput) = AsyncStream.makeStream(of: BackfillService.Request.self)
        let backfill = BackfillService(
            supply: SourceCandles(source: runner.source, http: runner.http), logger: logger,
            requests: fillRequests, inbox: inbox)
        let evaluator = EvaluatorService(
            ruleSet: ruleSet, runner: runner, logger: logger, monitor: monitor, inbox: inbox,
            output: handOverInput, gate: gate, saved: saved, store: delivery.store,
            saveEvery: saveEvery,
            backfill: LiveBackfill(requests: fillRequestsInput, ledger: delivery.store?.backfill))
        let deliveryService = DeliveryService(
            delivery: delivery, input: handOver, clock: handOverInput, gate: gate,
            drainTimeout: drainTimeout, logger: logger)
        // In data order; the group shuts them down from the last to the first.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let statusServer { services.append(.init(service: statusServer)) }
        services.append(.init(service: deliveryService))
        if let silenceWatcher { services.append(.init(service: silenceWatcher)) }
        services.append(.init(service: evaluator))
        services.append(.init(service: reload))
        services.append(.init(service: WatchdogService(monitor: monitor)))
        services.append(.init(service: feed, successTerminationBehavior: .gracefullyShutdownGroup))
        // Shut down first: a candle request in flight must not hold up the feed's stop.
        services.append(.init(service: backfill))
        let watch = delivery.store.map {
            StateFolderWatch(store: $0, every: stateCheckEvery, logger: logger, monitor: monitor)
        }
        if let watch { services.append(.init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup)) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: shutdownSignals, logger: logger))
        let timer = stop.map { stop in
            Task {
                await stop()
                if !Task.isCancelled { await group.triggerGracefulShutdown() }
            }
        }
        defer { timer?.cancel() }
        try await group.run()
        let counts = inbox.counts
        return Outcome(
            stats: evaluator.stats, deliveryFailures: deliveryService.failures,
            unwritten: delivery.unwritten != nil, stateLost: watch?.lost, inboxSent: counts.sent,
            inboxReceived: counts.received, inboxPeak: counts.peak)
    }
}
