import AlertEngine
import AlertFeeds
import AlertModel
import AlertRules
import AlertStore
import Logging
import Operations
import ServiceLifecycle
import UnixSignals

/// `run` and `demo`: every long-lived part is a `Service` in one `ServiceGroup`, in data order:
///
///     FeedService (one per feed) ──inbox lane──▶ EvaluatorService ──hand-over (AlertGate)──▶ DeliveryService ──▶ sinks, outbox
///      └ its BackfillService (candles) ◀── history to fill ──┘ │   StatusServer (/metrics, /healthz), WatchdogService
///         RuleReloadService (SIGHUP: rules, and sources added or removed) ──┘
///
/// The feeds are the `--source` feed and one per source the rule files define (rules v3 §2),
/// each with its own connection, reconnects, staleness, market list and backfill. Data flows
/// one way, through two bounds: each feed's lane of the evaluator's `Inbox` holds at most
/// `feedEventsInFlight` of its events (that feed then waits, and its frames wait in its
/// socket; no other feed waits for it), and `AlertGate` makes the evaluator wait when a burst
/// leaves `alertsInFlight` alerts on their way to the outbox. Waiting rather than dropping: a
/// dropped frame is a lost price, and a feed kept waiting past its stale limit reconnects like
/// any silent feed.
///
/// SIGTERM, SIGINT, `stop` (`--duration`) or the last feed ending by itself shut the group down
/// in pipeline order (the group stops services in the reverse of their order in it; feeds a
/// reload added come last, so they stop first): each feed's candle request in flight is
/// cancelled and the feed stops (`STOPPING=1`), the inbox ends once every feed has stopped,
/// the evaluator evaluates what the feeds gave and hands on the final save, delivery writes
/// every alert to its sink or the outbox, saves, and gives the outbox `drainTimeout`, and the
/// status server stops last. Each service returns only at its turn (the group treats an
/// earlier return as a failure), except a feed (which ends by itself, or when a reload removes
/// its source) and `StateFolderWatch`, whose return shuts the group down when the state folder
/// is deleted under the run. `monitor` sees every feed event, tick count and alert (metrics,
/// `/healthz`, systemd notifications); it never talks back.
public struct LivePipeline: Sendable {
    public var ruleSet: RuleSet
    /// The feeds at start: the `--source` feed, then the rule files' sources in file order.
    public var feeds: [LiveFeed]
    /// How a rule-file source is followed (`run`: `SourceRegistry` by its type, at its
    /// endpoint); nil: the rule files' sources are not followed (a reload adds none).
    public var makeRunner: (@Sendable (SourceDefinition) throws -> FeedRunner)?
    /// The options the evaluator takes from the feeds (`--max-tick-skew`).
    public var feedOptions: FeedOptions
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
    /// Set when several instances share the store (Docs/postgres.md#several-instances): the
    /// leases, this instance's roles, and the leadership service, placed before delivery in
    /// the group so that it stops after it (a leader's last save and drain happen under its
    /// lease, which it then releases).
    public var roles: InstanceRoles?

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

    /// The one feed `runner`, as `--source` (its ticks without a source).
    public init(ruleSet: RuleSet, runner: FeedRunner, delivery: AlertDelivery, logger: Logger, monitor: PipelineMonitor)
    {
        self.init(
            ruleSet: ruleSet, feeds: [LiveFeed(runner: runner)], feedOptions: runner.options, delivery: delivery,
            logger: logger, monitor: monitor)
    }

    public init(
        ruleSet: RuleSet, feeds: [LiveFeed], feedOptions: FeedOptions, delivery: AlertDelivery, logger: Logger,
        monitor: PipelineMonitor
    ) {
        self.ruleSet = ruleSet
        self.feeds = feeds
        self.feedOptions = feedOptions
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

        let roster = FeedRoster(
            inbox: inbox, monitor: monitor, logger: logger, stopping: stopping, makeRunner: makeRunner,
            backfills: true, markets: delivery.store?.localFolder.map(SourceMarketStore.init))
        let feedServices = feeds.map { feed in
            roster.make(
                feed, definition: ruleSet.sources.first { feed.tag != nil && $0.name == feed.tag }, ruleSet: ruleSet)
        }
        let reload = RuleReloadService(
            paths: rulePaths, running: ruleSet, logger: logger, inbox: inbox,
            requests: reloadRequests, sources: makeRunner == nil ? nil : roster)
        let evaluator = EvaluatorService(
            ruleSet: ruleSet, options: feedOptions, logger: logger, monitor: monitor, inbox: inbox,
            output: handOverInput, gate: gate, saved: saved, store: delivery.store,
            saveEvery: saveEvery, ledger: delivery.store?.ledger, plainFeed: feeds.contains { $0.tag == nil },
            leases: roles?.leases)
        let deliveryService = DeliveryService(
            delivery: delivery, input: handOver, clock: handOverInput, gate: gate,
            drainTimeout: drainTimeout, logger: logger)
        // In data order; the group shuts them down from the last to the first.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let statusServer { services.append(.init(service: statusServer)) }
        if let roles { services.append(.init(service: roles.leadership)) }
        services.append(.init(service: deliveryService))
        if let silenceWatcher = roles?.silenceWatcher ?? silenceWatcher {
            services.append(.init(service: silenceWatcher))
        }
        if let roles {
            services.append(
                .init(
                    service: RoleWatch(
                        roles: roles, inbox: inbox, delivery: delivery, monitor: monitor, logger: logger)))
        }
        services.append(.init(service: evaluator))
        services.append(.init(service: reload))
        services.append(.init(service: WatchdogService(monitor: monitor)))
        // Its turn comes once every feed has stopped: the evaluator's input ends there.
        services.append(.init(service: InboxCloser(inbox: inbox)))
        for feed in feedServices { services.append(.init(service: feed, successTerminationBehavior: .ignore)) }
        let watch = delivery.store.map {
            StateFolderWatch(store: $0, every: stateCheckEvery, logger: logger, monitor: monitor)
        }
        if let watch { services.append(.init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup)) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: shutdownSignals, logger: logger))
        roster.use(group)
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

/// Ends the evaluator's inbox at its turn in the shutdown, which comes after every feed's: the
/// evaluator then sees every event the feeds gave, and nothing after.
final class InboxCloser: Service {
    let inbox: Inbox<EvaluatorInput>

    init(inbox: Inbox<EvaluatorInput>) {
        self.inbox = inbox
    }

    func run() async {
        try? await gracefulShutdown()
        inbox.finish()
    }
}
