import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertPolicy
import AlertPostgres
import AlertRules
import AlertSinks
import AlertStore
import ArgumentParser
import Logging
import Platform
import Synchronization

/// `pricealert run`: the daemon. Follows `--source` and every source the rule files define
/// (rules v3 §2), each with its market list (reloaded), live prices, reconnects and staleness,
/// evaluates the rules and dispatches alerts, until SIGTERM or SIGINT.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Follow live prices and dispatch alerts until stopped.",
        discussion:
            "State (pair states, last prices, minute history, market list, outbox) is kept in the state folder and restored at start. Prices come from --source and from every source the rule files define under \"sources\" (version 3), each followed on its own connection. SIGHUP re-reads the rule files (a file with errors keeps the running rules) and starts the sources they add, stops the ones they remove, and keeps the others connected. When a feed gives no price for --stale-after, the sinks get a stale-feed alert (@feed-stale), and @feed-recovered when prices return.\n\nExit codes: 0 stopped by a signal or --duration, 64 no --source and no source in the rule files, or a rule-file source named like --source, 65 rule file errors, 66 unreadable rule file, 69 the --listen address cannot be bound, 73 a sink or the state folder cannot be set up, an alert could never be written to the outbox, or the state folder was deleted while in use, 74 alerts became dead letters (rows still pending wait in the outbox for the next start), 75 the state folder is in use by another pricealert."
    )

    @OptionGroup var rules: RulesOption

    @Option(
        help:
            "Where prices come from: \(SourceRegistry.names.joined(separator: ", ")); its ticks have no source. Optional when the rule files define sources."
    )
    var source: String?

    @Option(help: "The source's REST base URL (its websocket URL follows: http→ws, https→wss), e.g. a local server.")
    var endpoint: String?
    @OptionGroup var tuning: FeedTuning
    @OptionGroup var skew: TickSkewOption

    @OptionGroup var state: StateOption
    @OptionGroup var postgres: StoreOption
    @OptionGroup var daemon: DaemonOptions

    @Option(help: "Stop after this long (e.g. 10m); without it, run until SIGTERM/SIGINT.")
    var duration: DurationArgument?

    @Option(help: "How often the engine's state is saved in the state folder (it is also saved at shutdown).")
    var saveEvery: DurationArgument = DurationArgument(.seconds(60))

    func validate() throws {
        if let source { try SourceOptions.check(source: source, endpoint: endpoint) }
        if endpoint != nil, source == nil { throw ValidationError("--endpoint is used with --source") }
    }

    func run() async throws {
        Logs.bootstrap()
        RuleReload.ignoreUntilListening()
        let ruleSet = try rules.load()
        let sinks = try Inputs.sinks(for: ruleSet)
        let logger = Logger(label: "pricealert")
        let store: any DurableStore
        var shared: PostgresStore?
        if let url = try postgres.url(besides: state) {
            // Several `run`s may share the store: leadership per source decides who writes.
            shared = try await StoreOption.open(url, use: PostgresStore.Use(reconnects: true))
            store = shared!
        } else {
            store = try state.open()
        }
        let saved = try await StoreOption.loadSaved(store)
        let delivery = try await AlertDelivery.make(
            ruleSet: ruleSet, sinks: sinks, store: store, standby: shared != nil)
        let roles = shared.map { instanceRoles(ruleSet: ruleSet, store: $0, delivery: delivery, logger: logger) }
        let http = NIOHTTPClient.shared
        let options = skew.applied(to: tuning.options)
        let makeRunner: @Sendable (SourceDefinition) throws -> FeedRunner = { definition in
            FeedRunner(
                source: try SourceRegistry.make(definition.type, endpoint: definition.endpoint), http: http,
                options: options, logger: logger)
        }
        let keptMarkets = try? await store.engine.loadMarkets()
        let outcome = try await LiveDaemon.run(
            ruleSet: ruleSet,
            feeds: try feeds(
                of: ruleSet, make: makeRunner, http: http, options: options, logger: logger, keptMarkets: keptMarkets),
            feedOptions: options, makeRunner: makeRunner, delivery: delivery, options: daemon,
            duration: duration?.duration, logger: logger, rulePaths: rules.files, saved: saved,
            saveEvery: saveEvery.duration, roles: roles)
        var summary =
            "run: \(outcome.stats.accepted) ticks, \(outcome.stats.droppedTotal) dropped, \(outcome.stats.alerts) alerts"
        if outcome.stats.unwatched > 0 {
            summary += "; \(outcome.stats.unwatched) ticks of symbols no rule applies to (not kept)"
        }
        StandardError.write(summary)
        if outcome.unwritten || outcome.stateLost != nil { throw ExitCodes.stateUnusable }
        if outcome.deliveryFailures > 0 { throw ExitCodes.deliveryFailed }
    }

    /// The leases of a run on a shared store: the home lease is `--source`'s name, else the
    /// first source of the rule files (`SourceLeases`); each rule-file source has its own.
    /// Writes to `store` go under their lease's fence from now on.
    private func instanceRoles(
        ruleSet: RuleSet, store: PostgresStore, delivery: AlertDelivery, logger: Logger
    ) -> InstanceRoles {
        let names = ruleSet.sources.map(\.name)
        let home = source ?? names.first ?? "default"
        let instance = PostgresLeadership.Instance.current(sources: [home] + names.filter { $0 != home })
        let url = store.url
        // The leases read their epochs from the leadership, which reads from them how long
        // this instance has followed each source.
        let made = Mutex<LeadershipService?>(nil)
        let leases = SourceLeases(home: home, sources: Set(names)) { lease in
            if case .leader(let epoch) = made.withLock({ $0 })?.role(of: lease) { return epoch }
            return nil
        }
        let leadership = LeadershipService(
            instance: instance, sources: instance.sources, logger: logger, following: leases.followed,
            open: { try await PostgresStore.open(url, logger: Logger(label: "pricealert.postgres")) })
        made.withLock { $0 = leadership }
        leases.whenChanged { leadership.follow($0) }
        // One owner for the stages of every sink with quiet hours or a group: the home lease's
        // leader (Docs/postgres.md#digests-and-quiet-hours-across-instances).
        let (refused, handBack) = AsyncStream.makeStream(of: RefusedEvents.self)
        store.fence(with: leases, instance: instance.id, staged: delivery.policy.stagedSinks) { alerts, epoch in
            handBack.yield(RefusedEvents(alerts: alerts, leaderEpoch: epoch))
        }
        delivery.policy.share { leases.epoch(of: home) }
        let (changes, forward) = AsyncStream.makeStream(of: RoleChange.self)
        Task {
            for await change in leadership.changes {
                if case .leader(let epoch) = change.role {
                    forward.yield(RoleChange(lease: change.source, epoch: epoch))
                } else {
                    forward.yield(RoleChange(lease: change.source, epoch: nil))
                }
            }
            forward.finish()
        }
        let watcher = PostgresSilenceWatcher(url: url, logger: logger) { records in
            delivery.policy.use(SilenceSet(records: records))
        }
        logger.info(
            "instance \(UserText.double(instance.id)) follows \(instance.sources.count) sources on \(store.url); leadership per source decides which instance saves and sends"
        )
        return InstanceRoles(
            leases: leases, changes: changes, refused: refused,
            saveMarks: { try await store.leadership.saveMarks(leases) },
            adopt: { lease, epoch in
                try await store.outbox.adopt(PostgresFence(source: lease, epoch: epoch), now: Wallclock.millis())
            }, pruneLedger: { try await store.outbox.pruneLedger(before: $0) }, leadership: leadership,
            silenceWatcher: watcher)
    }

    /// `--source`'s feed, then one per source the rule files define, in file order.
    private func feeds(
        of ruleSet: RuleSet, make: (SourceDefinition) throws -> FeedRunner, http: any HTTPClient,
        options: FeedOptions, logger: Logger, keptMarkets: MarketsSave?
    ) throws -> [LiveFeed] {
        var feeds: [LiveFeed] = []
        if let source {
            if let clash = ruleSet.sources.first(where: { $0.name == source }) {
                StandardError.write(
                    "pricealert: error: the rule files define a source named \(UserText.single(clash.name)), the name --source gives its feed; rename the rule files' source"
                )
                throw ExitCodes.usage
            }
            var runner = FeedRunner(
                source: try SourceRegistry.make(source, endpoint: endpoint), http: http, options: options,
                logger: logger)
            // The list the state folder or store kept, followed when the exchange cannot give
            // one at start.
            if let kept = keptMarkets, kept.source == source { runner.saved = (kept.markets, kept.fetchedAt) }
            feeds.append(LiveFeed(runner: runner))
        }
        for definition in ruleSet.sources {
            feeds.append(LiveFeed(name: definition.name, tag: definition.name, runner: try make(definition)))
        }
        guard !feeds.isEmpty else {
            StandardError.write(
                "pricealert: error: no prices to follow: give --source, or define sources in a version 3 rule file (Docs/rules.md)"
            )
            throw ExitCodes.usage
        }
        return feeds
    }
}
