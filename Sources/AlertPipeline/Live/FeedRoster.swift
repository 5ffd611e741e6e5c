import AlertFeeds
import AlertModel
import AlertRules
import AlertStore
import Logging
import ServiceLifecycle
import Synchronization

/// The running feeds of one `run`, by name: makes each feed's service (its inbox lane, its
/// monitor, its backfill, the market list the state folder kept for it), and on a reload
/// starts the sources the rule files added and stops the ones they removed (or changed: the
/// new definition starts afresh, and so does a feed, `--source`'s too, whose symbols the rules
/// need changed, `FeedSymbols`); a feed that did not change keeps its connection. Once every
/// feed has ended by itself (a fatal error), the group shuts down, as it does for `--source`
/// alone.
final class FeedRoster: Sendable {
    /// How a rule-file source's runner is made (`SourceRegistry` by type, with its endpoint).
    typealias MakeRunner = @Sendable (SourceDefinition) throws -> FeedRunner

    private struct State {
        var running: [(feed: LiveFeed, definition: SourceDefinition?, symbols: Set<String>?, service: FeedService)] =
            []
        var nextLane = 1
        var group: ServiceGroup?
    }

    let inbox: Inbox<EvaluatorInput>
    let monitor: PipelineMonitor
    let logger: Logger
    let stopping: String
    let makeRunner: MakeRunner?
    /// With a backfill ledger: where each feed's fills are recorded (nil: none).
    let backfills: Bool
    /// Where each rule-file source's last market list is kept: the state folder or the store
    /// (nil: neither).
    let markets: (any SourceMarketKeeper)?
    private let state = Mutex(State())

    init(
        inbox: Inbox<EvaluatorInput>, monitor: PipelineMonitor, logger: Logger, stopping: String,
        makeRunner: MakeRunner?, backfills: Bool, markets: (any SourceMarketKeeper)? = nil
    ) {
        self.inbox = inbox
        self.monitor = monitor
        self.logger = logger
        self.stopping = stopping
        self.makeRunner = makeRunner
        self.backfills = backfills
        self.markets = markets
    }

    /// The group that feeds added by a reload join.
    func use(_ group: ServiceGroup) {
        state.withLock { $0.group = group }
    }

    /// A service for `feed` (`definition`: the rule-file source it follows; nil for `--source`),
    /// following the symbols `ruleSet` needs from it, counted among the running feeds.
    func make(_ feed: LiveFeed, definition: SourceDefinition?, ruleSet: RuleSet) async -> FeedService {
        let symbols = FeedSymbols.needed(by: ruleSet, source: feed.tag)
        let given = feed
        var feed = feed
        feed.runner = feed.runner.following(symbols)
        if let tag = feed.tag, let markets {
            do {
                feed.runner.saved = try await markets.load(tag).map { ($0.markets, $0.fetchedAt) }
            } catch {
                logger.warning("source '\(tag)': \(error); the feed waits for the exchange's list")
            }
        }
        let lane = state.withLock { state in
            defer { state.nextLane += 1 }
            return state.nextLane
        }
        let feedMonitor = monitor.addFeed(feed.name, staleAfter: feed.runner.staleLimit)
        var requests: AsyncStream<BackfillService.Request>.Continuation?
        var backfill: BackfillService?
        if backfills {
            let (stream, input) = AsyncStream.makeStream(of: BackfillService.Request.self)
            let candles = SourceCandles(source: feed.runner.source, http: feed.runner.http)
            let supply: any CandleSupply =
                feed.tag.map { KeyedCandles(name: $0, prefix: $0 + ":", inner: candles) } ?? candles
            backfill = BackfillService(supply: supply, logger: logger, requests: stream, inbox: inbox, lane: lane)
            requests = input
        }
        let origin = FeedOrigin(
            name: feed.name, tag: feed.tag, staleAfter: feed.runner.options.staleAfter, monitor: feedMonitor,
            backfill: requests, kept: feed.runner.saved?.markets, subscribes: feed.runner.subscribesBySymbol)
        let service = FeedService(
            feed: feed, origin: origin, monitor: monitor, stopping: stopping, inbox: inbox, lane: lane,
            backfill: backfill
        ) { [weak self] service in await self?.ended(service) }
        state.withLock { $0.running.append((given, definition, symbols, service)) }
        return service
    }

    /// The feed `definition` names, made with `makeRunner`; nil (logged) when it cannot be made.
    func make(_ definition: SourceDefinition, ruleSet: RuleSet) async -> FeedService? {
        guard let makeRunner else { return nil }
        let runner: FeedRunner
        do {
            runner = try makeRunner(definition)
        } catch {
            logger.error("source '\(definition.name)': \(error)")
            return nil
        }
        return await make(
            LiveFeed(name: definition.name, tag: definition.name, runner: runner), definition: definition,
            ruleSet: ruleSet)
    }

    /// Starts the rule-file sources `ruleSet` adds and stops those it no longer has, or has
    /// changed (type or endpoint); a feed whose needed symbols changed (`--source`'s too) is
    /// stopped and started afresh (a new subscribe); the others keep running untouched. Returns
    /// once each stopped feed has stopped.
    func apply(_ ruleSet: RuleSet) async {
        let sources = ruleSet.sources
        typealias Stale = (feed: LiveFeed, definition: SourceDefinition?, service: FeedService, removed: Bool)
        let (stale, group) = state.withLock { state -> ([Stale], ServiceGroup?) in
            let stale = state.running.compactMap { entry -> Stale? in
                let removed = entry.definition.map { !sources.contains($0) } ?? false
                let resubscribes =
                    entry.service.feed.runner.subscribesBySymbol
                    && entry.symbols != FeedSymbols.needed(by: ruleSet, source: entry.feed.tag)
                return removed || resubscribes ? (entry.feed, entry.definition, entry.service, removed) : nil
            }
            return (stale, state.group)
        }
        for entry in stale {
            let service = entry.service
            await service.stop()
            forget(service)
            monitor.removeFeed(service.feed.name)
            if entry.removed {
                logger.notice("source '\(service.feed.name)' removed from the rule files: its feed stopped")
                continue
            }
            logger.notice("source '\(service.feed.name)': the rules need other symbols: its feed resubscribes")
            // A rule-file source starts afresh below, with the others the files add.
            guard entry.definition == nil, let group else { continue }
            let restarted = await make(entry.feed, definition: nil, ruleSet: ruleSet)
            await group.addServiceUnlessShutdown(
                ServiceGroupConfiguration.ServiceConfiguration(service: restarted, successTerminationBehavior: .ignore))
        }
        let known = state.withLock { Set($0.running.compactMap(\.definition?.name)) }
        for definition in sources where !known.contains(definition.name) {
            guard let group, let service = await make(definition, ruleSet: ruleSet) else { continue }
            await group.addServiceUnlessShutdown(
                ServiceGroupConfiguration.ServiceConfiguration(service: service, successTerminationBehavior: .ignore))
            logger.notice("source '\(definition.name)' added by the rule files: its feed started")
        }
    }

    private func forget(_ service: FeedService) {
        state.withLock { $0.running.removeAll { $0.service === service } }
    }

    /// A feed ended by itself: once none is left, the group shuts down.
    private func ended(_ service: FeedService) async {
        forget(service)
        let (left, group) = state.withLock { ($0.running.count, $0.group) }
        guard left == 0 else { return }
        monitor.shutdownBegan(status: stopping)
        await group?.triggerGracefulShutdown()
    }
}
