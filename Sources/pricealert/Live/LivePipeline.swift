import AlertCore
import AlertFeeds
import AlertHTTP
import AlertRules
import AlertSinks
import AlertStore
import CMemory
import Daemon
import Logging
import Synchronization
import Wallclock

/// The engine state loaded at start, handed over once (`take`). The engine must be the only
/// owner of the minute histories it restores: while another reference to a snapshot lives, each
/// symbol's first new minute copies its history, and the daemon holds both copies for the run.
final class SavedState: Sendable {
    private let snapshots: Mutex<[SymbolSnapshot]>

    init(_ snapshots: consuming [SymbolSnapshot]) {
        self.snapshots = Mutex(snapshots)
    }

    /// The snapshots, left empty here.
    func take() -> [SymbolSnapshot] {
        snapshots.withLock { snapshots in
            var taken: [SymbolSnapshot] = []
            swap(&taken, &snapshots)
            return taken
        }
    }
}

/// Feed ──events──▶ Engine ──alerts──▶ Dispatcher ──▶ Sinks, for `run` and `demo`.
///
/// Three tasks joined by unbounded streams, so data flows one way and nothing upstream ever
/// waits for a sink: the feed yields events, the evaluation loop turns ticks into alerts, the
/// dispatcher delivers them in order (webhook/exec sinks through the outbox when a state folder
/// is in use). On cancellation (SIGTERM, SIGINT, `--duration`) the feed
/// stops first, then every alert already made is delivered (or, for outbox sinks, written to the
/// outbox and given `drainTimeout` to go out) before `run` returns. `monitor` sees every feed
/// event, tick count and alert (metrics, `/healthz`, systemd notifications); it never talks back.
///
/// With a state folder, the engine's state rides the same stream as the alerts: a save is
/// written only after every alert made before it is in the outbox, so a crash can repeat an
/// alert (same id) but never lose one. Saves happen every `saveEvery`, when the market list
/// arrives, and at shutdown. While an alert cannot be written to the outbox (disk full), it is
/// held and written again every second, no state is saved (the changes are kept for the next
/// save), `/healthz` says so, and the run ends with `unwritten` set if it never was written.
/// SIGHUP re-reads `rulePaths` (see `RuleReload`).
struct LivePipeline: Sendable {
    var ruleSet: RuleSet
    var runner: FeedRunner
    var delivery: AlertDelivery
    var logger: Logger
    var monitor: PipelineMonitor
    /// How long the outbox may take to empty at shutdown (what is left is sent on the next start).
    var drainTimeout: Duration = .seconds(10)
    /// The rule files SIGHUP re-reads (empty: built-in rules, nothing to re-read).
    var rulePaths: [String] = []
    /// State saved by the previous run, handed to the engine (once).
    var saved = SavedState([])
    var saveEvery: Duration = .seconds(60)
    /// After a tick that leaves this many alerts on their way from the engine to the outbox, the
    /// evaluation loop waits until half of them are dispatched (see `AlertGate`).
    var alertsInFlight = 1024

    struct Outcome {
        var stats: Engine.Stats
        var deliveryFailures: Int
        /// Some alert could not be written to the outbox and was not sent (named on standard
        /// error); the state was not saved after it.
        var unwritten = false
    }

    /// What flows from the evaluation loop to the delivery task, in order.
    enum Output: Sendable {
        case alert(Alert)
        case save([SymbolSnapshot], markets: MarketsSave?)
        /// The known markets of `listed` rules, saved behind the alerts before them.
        case listings(NewListings)
        /// Symbols filled from candles, recorded in the ledger once the save before them is written.
        case backfilled([BackfillLedger.Entry])
    }

    /// What the evaluation loop reacts to.
    enum Input: Sendable {
        case feed(FeedEvent)
        case reload(RuleSet)
    }

    func run() async -> Outcome {
        let (events, feed) = runner.start()
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        let forward = Task {
            for await event in events { input.yield(.feed(event)) }
            input.finish()
        }
        let reloads = Task { [rulePaths, ruleSet, logger] in
            await RuleReload.listen(paths: rulePaths, running: ruleSet, logger: logger) { input.yield(.reload($0)) }
        }
        let (outputs, output) = AsyncStream.makeStream(of: Output.self)
        let gate = AlertGate(limit: alertsInFlight)
        let monitor = self.monitor
        monitor.status.watchOutbox { [delivery] in delivery.unwritten?.description }
        let deliveryTask = Task { [delivery, logger] in
            var failures = 0
            var sinceCommit = 0
            var unsaved = UnsavedState()
            var unrecorded: [BackfillLedger.Entry] = []
            for await item in outputs {
                switch item {
                case .alert(let alert):
                    failures += await delivery.dispatch(alert)
                    // Half a gate's worth at a time is made durable before the gate lets the loop
                    // on, so the outbox's queue is bounded too, not only the stream.
                    sinceCommit += 1
                    if sinceCommit >= gate.limit / 2 {
                        try? await delivery.commit()
                        sinceCommit = 0
                    }
                    gate.dispatched()
                case .save(let snapshots, let markets):
                    let (snapshots, markets) = unsaved.adding(snapshots, markets: markets)
                    if !(await delivery.save(snapshots, markets: markets, logger: logger)) {
                        unsaved.keep(snapshots, markets: markets)
                    }
                    unrecorded = Self.record(unrecorded, unless: unsaved, in: delivery, logger: logger)
                case .backfilled(let entries):
                    unrecorded = Self.record(unrecorded + entries, unless: unsaved, in: delivery, logger: logger)
                case .listings(let listings):
                    await delivery.save(listings, logger: logger)
                }
            }
            return failures
        }

        let watchdog = Task { await monitor.keepWatchdogFed() }
        let policy = Task { [delivery, logger] in await delivery.followPolicy(logger: logger) }
        var evaluation = Evaluation(ruleSet: ruleSet, source: runner.source.name, staleAfter: runner.options.staleAfter,
                                    logger: logger, monitor: monitor, output: output, gate: gate)
        evaluation.backfill = LiveBackfill(source: runner.source, http: runner.http, ledger: delivery.store?.backfill)
        if let store = self.delivery.store {
            evaluation.persist(restoring: saved.take(), every: saveEvery)
            evaluation.restoreListings(from: ListingStore(folder: store.folder))
        } else {
            evaluation.restore(saved.take())
        }
        let stopping = "stopping: delivering the alerts in hand (up to \(DurationText.format(drainTimeout.milliseconds)) for the outbox)"
        await withTaskCancellationHandler {
            for await item in inputs {
                switch item {
                case .feed(let event): await evaluation.handle(event)
                case .reload(let rules): evaluation.reload(rules)
                }
            }
        } onCancel: {
            monitor.shutdownBegan(status: stopping)
            feed.cancel()
        }
        // Shutdown, in the order systemd expects: stop reading, save the state behind the last
        // alerts, deliver, return.
        monitor.shutdownBegan(status: stopping)
        feed.cancel()
        watchdog.cancel()
        reloads.cancel()
        policy.cancel()
        await policy.value
        await forward.value
        evaluation.saveChanges(final: true)
        output.finish()
        var failures = await deliveryTask.value
        failures += await self.delivery.finish(timeout: drainTimeout, countPending: false)
        return Outcome(stats: evaluation.stats, deliveryFailures: failures, unwritten: delivery.unwritten != nil)
    }
}

extension LivePipeline {
    /// Records `entries` in the ledger when every save handed over so far is written (`unsaved`
    /// is empty); otherwise returns them to record after a later save.
    static func record(_ entries: [BackfillLedger.Entry], unless unsaved: UnsavedState, in delivery: AlertDelivery,
                       logger: Logger) -> [BackfillLedger.Entry] {
        guard !entries.isEmpty, let store = delivery.store else { return [] }
        guard unsaved.isEmpty else { return entries }
        do {
            try store.backfill.record(entries)
        } catch {
            logger.warning("cannot record the filled history in \(store.folder.path): \(store.describe(error)); the next start fetches it again")
        }
        return []
    }
}

/// `run`'s backfill (Docs/candles.md): where candles come from, and the ledger of the symbols
/// filled before (nil without a state folder: every start fills again).
struct LiveBackfill: Sendable {
    let source: any PriceSource
    let http: any HTTPClient
    let ledger: BackfillLedger?
}

/// Engine state a save could not write (an alert before it was not in the outbox yet, or the
/// save failed), written with the next save: the newest snapshot of each symbol, the newest
/// market list.
struct UnsavedState {
    private var snapshots: [String: SymbolSnapshot] = [:]
    private var markets: MarketsSave?

    /// What the next save writes: what is kept here (taken out) with `newer` over it.
    mutating func adding(_ newer: [SymbolSnapshot], markets newerMarkets: MarketsSave?)
        -> ([SymbolSnapshot], markets: MarketsSave?) {
        let allMarkets = newerMarkets ?? markets
        markets = nil
        if snapshots.isEmpty { return (newer, allMarkets) }
        for snapshot in newer { snapshots[snapshot.symbol] = snapshot }
        let all = Array(snapshots.values)
        snapshots = [:]
        return (all, allMarkets)
    }

    /// Nothing is waiting to be written.
    var isEmpty: Bool { snapshots.isEmpty && markets == nil }

    /// Keeps what a save could not write.
    mutating func keep(_ unsaved: [SymbolSnapshot], markets unsavedMarkets: MarketsSave?) {
        for snapshot in unsaved { snapshots[snapshot.symbol] = snapshot }
        markets = unsavedMarkets
    }
}

/// The evaluation loop's state: the engine (made when the first market list arrives) and what
/// feed events mean for users.
struct Evaluation {
    private(set) var ruleSet: RuleSet
    let source: String
    let staleAfter: Duration
    let logger: Logger
    let monitor: PipelineMonitor
    let output: AsyncStream<LivePipeline.Output>.Continuation
    let gate: AlertGate
    private(set) var engine: Engine?
    private var dropped = 0
    private var alerts: [Alert] = []
    /// `listed` rules: the known markets, and those waiting for their first tick.
    private var listings: NewListings
    /// Saving: on when a state folder is in use.
    private var persists = false
    private var restoring: [SymbolSnapshot] = []
    private var saveEvery: Int64 = 60_000
    private var lastSave: Int64 = 0
    /// The first frame after the engine was made has been evaluated (see `handle`).
    private var settled = false
    /// Where the history of the rules' symbols is filled from, before their first tick.
    var backfill: LiveBackfill?

    init(ruleSet: RuleSet, source: String, staleAfter: Duration, logger: Logger, monitor: PipelineMonitor,
         output: AsyncStream<LivePipeline.Output>.Continuation, gate: AlertGate) {
        self.ruleSet = ruleSet
        self.source = source
        self.staleAfter = staleAfter
        self.logger = logger
        self.monitor = monitor
        self.output = output
        self.gate = gate
        listings = NewListings(rules: ruleSet.rules)
    }

    /// The known markets a previous run saved; unreadable, the next list counts as the first.
    mutating func restoreListings(from store: ListingStore) {
        guard !listings.isEmpty else { return }
        do {
            let (known, pending) = try store.load()
            listings.restore(known: known, pending: pending)
        } catch {
            logger.warning("cannot read \(store.path): \(error); the next market list is taken as the first")
        }
    }

    private mutating func saveListings() {
        if listings.takeChanged(), persists { output.yield(.listings(listings)) }
    }

    /// Restores `saved` into the engine when it is made, and saves changes every `every`.
    mutating func persist(restoring saved: [SymbolSnapshot], every: Duration) {
        persists = true
        restoring = saved
        saveEvery = every.milliseconds
        lastSave = Wallclock.millis()
    }

    /// Restores `saved` into the engine when it is made, saving nothing (no state folder).
    mutating func restore(_ saved: [SymbolSnapshot]) {
        restoring = saved
    }

    var stats: Engine.Stats {
        var stats = engine?.stats ?? Engine.Stats()
        if dropped > 0 { stats.dropped[.malformed, default: 0] += dropped }
        return stats
    }

    mutating func handle(_ event: FeedEvent) async {
        if case .ticks = event {} else { monitor.feed(event) }
        switch event {
        case .markets(let markets):
            listings.update(MarketList(markets))
            saveListings()
            if let engine {
                engine.replaceMarkets(MarketList(markets))
                logger.info("\(source): market list reloaded: \(markets.count) markets")
            } else {
                let engine = Engine(rules: ruleSet.rules, markets: MarketList(markets), portfolios: ruleSet.portfolios)
                if !restoring.isEmpty {
                    engine.restore(restoring)
                    logger.info("\(source): restored the saved state of \(restoring.count) symbols")
                    restoring = []
                }
                self.engine = engine
                if let backfill { await fillHistory(engine, from: backfill) }
                // Fetching and decoding the market list left freed buffers: give their pages back
                // before the first frame builds the symbols' groups.
                _ = pa_release_free_memory()
                logger.info("\(source): \(markets.count) markets, \(ruleSet.rules.count) rules")
                if engine.hasMatchRules, markets.isEmpty {
                    logger.warning("\(source): the market list is empty: 'match' rules apply to nothing")
                }
            }
            if persists {
                output.yield(.save([], markets: MarketsSave(markets: markets, source: source, fetchedAt: Wallclock.millis())))
            }
        case .ticks(let ticks):
            guard let engine else { return }
            var accepted = 0
            for tick in ticks {
                if let reason = engine.process(tick, into: &alerts) {
                    monitor.dropped(reason)
                } else {
                    accepted += 1
                    listings.process(tick, into: &alerts)
                }
                // Handed on tick by tick, in the same order: the buffer stays as small as one
                // tick's alerts (a frame of 227 ticks over 100 000 rules can fire 20 000, and
                // the buffer would keep that capacity for good).
                for alert in alerts { emit(alert) }
                alerts.removeAll(keepingCapacity: true)
                if gate.isFull { await gate.waitForRoom() }
            }
            monitor.prices(accepted: accepted)
            saveListings()
            if persists, Wallclock.millis() - lastSave >= saveEvery { saveChanges() }
            if !settled {
                // The first frame built its symbols' groups from the restored state, and those
                // symbols' snapshots are now freed: give their pages back.
                settled = true
                _ = pa_release_free_memory()
            }
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

    /// Fills the history of the symbols the rules need (`match` rules: under this first market
    /// list) that the ledger does not list, before any tick is evaluated; the seeded history
    /// is saved at once and the ledger records it after that save.
    private mutating func fillHistory(_ engine: Engine, from backfill: LiveBackfill) async {
        let reaches = Backfill.reaches(rules: ruleSet.rules, markets: engine.markets, portfolios: ruleSet.portfolios)
        guard !reaches.isEmpty else { return }
        var filled: [String: Int64] = [:]
        if let ledger = backfill.ledger {
            do {
                filled = try ledger.reaches(source: source)
            } catch {
                logger.warning("\(source): the ledger of filled history cannot be read: \(error); filling every symbol again")
            }
        }
        let now = Wallclock.millis()
        let needs = reaches.map { Backfill.Need(symbol: $0.key, reach: $0.value.reach, detail: $0.value.detail, until: now) }
        let logger = self.logger
        let entries = await HistoryBackfill.fill(needs, source: backfill.source, http: backfill.http, engine: engine,
                                                 filled: filled, now: now) { line in
            switch line {
            case .info(let text): logger.info("\(text)")
            case .notice(let text): logger.notice("\(text)")
            case .warning(let text): logger.warning("\(text)")
            }
        }
        guard persists, !entries.isEmpty else { return }
        saveChanges()
        output.yield(.backfilled(entries))
    }

    private func emit(_ alert: Alert) {
        monitor.alerted(rule: alert.rule)
        gate.sent()
        output.yield(.alert(alert))
    }

    /// Hands what changed since the last save to the delivery task, behind the alerts before it.
    /// The `final` save moves each minute history into its snapshot instead of copying it (a
    /// day of minutes for every symbol is megabytes): the engine takes no tick after it.
    mutating func saveChanges(final: Bool = false) {
        guard persists, let engine else { return }
        lastSave = Wallclock.millis()
        let changes = final ? engine.takeFinalChanges() : engine.takeChanges()
        if !changes.isEmpty { output.yield(.save(changes, markets: nil)) }
    }

    /// Swaps in reloaded rules: a new engine takes over every symbol's state, so rules that did
    /// not change keep theirs (armed, cooldown, once) and changed or new rules start fresh.
    mutating func reload(_ rules: RuleSet) {
        saveChanges()
        if let old = engine {
            let engine = Engine(rules: rules.rules, markets: old.markets, portfolios: rules.portfolios)
            engine.restore(old.snapshotAll())
            self.engine = engine
        }
        ruleSet = rules
        listings = listings.with(rules: rules.rules)
        logger.info("rules reloaded: \(rules.rules.count) rules")
    }

    /// Feed alerts go to every sink an enabled rule notifies, in first-use order.
    private var feedAlertSinks: [String] {
        let names = ruleSet.usedSinks
        return names.isEmpty ? ["stdout"] : names
    }
}
