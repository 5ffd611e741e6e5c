import AlertCore
import AlertFeeds
import AlertHTTP
import AlertRules
import AlertStore
import Daemon
import Logging
import ServiceLifecycle
import Synchronization
import Wallclock

/// The evaluator as a service: takes the feed's events and reloaded rules from its inbox, in
/// order, and hands alerts, saves and listings to delivery, in order. It never waits for a
/// sink, only for `AlertGate` when a burst leaves too many alerts on their way out, and for
/// each part of a save to be written before it copies the next (`saveChanges`). With a
/// state folder it hands on a save of the changed state every `saveEvery`, with each market
/// list, before a reload and at the end, and the known markets of `listed` rules when they
/// change, each behind the alerts made before it. Once the feed has stopped and every event in
/// the inbox is evaluated, its turn in the shutdown hands on the final save and finishes
/// delivery's input.
final class EvaluatorService: Service {
    let ruleSet: RuleSet
    let runner: FeedRunner
    let logger: Logger
    let monitor: PipelineMonitor
    let inbox: Inbox<EvaluatorInput>
    let output: AsyncStream<DeliveryInput>.Continuation
    let gate: AlertGate
    let saved: SavedState
    /// Where saves go: nil without a state folder (nothing is saved, listings are not restored).
    let store: StateStore?
    let saveEvery: Duration
    /// The counts of the run, once the service has returned.
    private let result = Mutex<Engine.Stats>(Engine.Stats())

    init(ruleSet: RuleSet, runner: FeedRunner, logger: Logger, monitor: PipelineMonitor,
         inbox: Inbox<EvaluatorInput>, output: AsyncStream<DeliveryInput>.Continuation, gate: AlertGate,
         saved: SavedState, store: StateStore?, saveEvery: Duration) {
        self.ruleSet = ruleSet
        self.runner = runner
        self.logger = logger
        self.monitor = monitor
        self.inbox = inbox
        self.output = output
        self.gate = gate
        self.saved = saved
        self.store = store
        self.saveEvery = saveEvery
    }

    var stats: Engine.Stats { result.withLock { $0 } }

    func run() async {
        var evaluation = LiveEvaluation(ruleSet: ruleSet, source: runner.source.name, staleAfter: runner.options.staleAfter,
                                        logger: logger, monitor: monitor, output: output, gate: gate)
        evaluation.backfill = LiveBackfill(source: runner.source, http: runner.http, ledger: store?.backfill)
        if let store {
            evaluation.persist(restoring: saved.take(), every: saveEvery)
            evaluation.restoreListings(from: ListingStore(folder: store.folder))
        } else {
            evaluation.restore(saved.take())
        }
        for await input in inbox {
            switch input {
            case .feed(let event): await evaluation.handle(event)
            case .reload(let rules): await evaluation.reload(rules)
            }
        }
        // The inbox ends when the feed has stopped; the final save waits for this service's
        // turn, so nothing it would hand on comes after it.
        try? await gracefulShutdown()
        await evaluation.saveChanges(final: true)
        output.finish()
        result.withLock { $0 = evaluation.stats }
    }
}

/// `run`'s backfill (Docs/candles.md): where candles come from, and the ledger of the symbols
/// filled before (nil without a state folder: every start fills again).
struct LiveBackfill: Sendable {
    let source: any PriceSource
    let http: any HTTPClient
    let ledger: BackfillLedger?
}

/// The evaluator service's state: the `Evaluator` (its engine made when the first market list
/// arrives) and what feed events mean for users.
struct LiveEvaluation {
    let source: String
    let staleAfter: Duration
    let logger: Logger
    let monitor: PipelineMonitor
    let output: AsyncStream<DeliveryInput>.Continuation
    let gate: AlertGate
    private var evaluator: Evaluator
    private var alerts: [Alert] = []
    /// Saving: on when a state folder is in use.
    private var persists = false
    private var saveEvery: Int64 = 60_000
    /// When the last save was handed on, on `intervals`.
    private var lastSave: Int64 = 0
    /// The monotonic clock `saveEvery` is measured on: setting the time of day neither stops
    /// saves nor bunches them.
    var intervals = ElapsedMillis()
    /// Where the history of the rules' symbols is filled from, before their first tick.
    var backfill: LiveBackfill?
    /// The reach filled per symbol by this run: the ledger records a fill only after the save
    /// holding it, and without a state folder there is no ledger.
    private var filledByThisRun: [String: Int64] = [:]

    init(ruleSet: RuleSet, source: String, staleAfter: Duration, logger: Logger, monitor: PipelineMonitor,
         output: AsyncStream<DeliveryInput>.Continuation, gate: AlertGate) {
        self.source = source
        self.staleAfter = staleAfter
        self.logger = logger
        self.monitor = monitor
        self.output = output
        self.gate = gate
        evaluator = Evaluator(waitingForMarketsWith: ruleSet)
    }

    /// The known markets a previous run saved; unreadable, the next list counts as the first.
    mutating func restoreListings(from store: ListingStore) {
        guard evaluator.watchesListings else { return }
        do {
            let (known, pending) = try store.load()
            evaluator.restoreListings(known: known, pending: pending)
        } catch {
            logger.warning("cannot read \(store.path): \(error); the next market list is taken as the first")
        }
    }

    private mutating func saveListings() {
        guard let listings = evaluator.takeChangedListings(), persists else { return }
        output.yield(.listings(listings))
    }

    /// Restores `saved` into the engine when it is made, and saves changes every `every`.
    mutating func persist(restoring saved: [SymbolSnapshot], every: Duration) {
        persists = true
        evaluator.restore(saved)
        saveEvery = every.milliseconds
        lastSave = intervals()
    }

    /// Restores `saved` into the engine when it is made, saving nothing (no state folder).
    mutating func restore(_ saved: [SymbolSnapshot]) {
        evaluator.restore(saved)
    }

    var stats: Engine.Stats { evaluator.stats }

    mutating func handle(_ event: FeedEvent) async {
        if case .ticks = event {} else { monitor.feed(event) }
        switch event {
        case .markets(let markets):
            switch evaluator.updateMarkets(MarketList(markets)) {
            case .replaced:
                saveListings()
                logger.info("\(source): market list reloaded: \(markets.count) markets")
                // Markets that `match` rules newly reach get their history before their first tick.
                if let backfill { await fillHistory(from: backfill) }
            case .madeEngine(let restored):
                saveListings()
                if restored > 0 { logger.info("\(source): restored the saved state of \(restored) symbols") }
                if let backfill { await fillHistory(from: backfill) }
                logger.info("\(source): \(markets.count) markets, \(evaluator.ruleSet.rules.count) rules")
                if evaluator.hasMatchRules, markets.isEmpty {
                    logger.warning("\(source): the market list is empty: 'match' rules apply to nothing")
                }
            }
            if persists {
                output.yield(.save([], markets: MarketsSave(markets: markets, source: source, fetchedAt: Wallclock.millis())))
            }
        case .ticks(let ticks):
            guard evaluator.isReady else { return }
            var accepted = 0
            let place = Drop.Place.feed(source: source)
            for tick in ticks {
                if let drop = evaluator.process(tick, at: place, into: &alerts) {
                    monitor.dropped(drop.reason)
                } else {
                    accepted += 1
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
            if persists, intervals() - lastSave >= saveEvery { await saveChanges() }
        case .dropped(let reason):
            // Counted whether or not the log line is written (a log message is made only when logged).
            let drop = evaluator.reject(reason, at: .feed(source: source))
            logger.debug("\(drop)")
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

    /// Fills the history of the symbols the rules need (`match` rules: under the market list in
    /// use) that neither the ledger nor this run filled as far back, before any tick is
    /// evaluated with these rules and markets; the seeded history is saved at once and the
    /// ledger records it after that save.
    private mutating func fillHistory(from backfill: LiveBackfill) async {
        let reaches = evaluator.historyReaches
        guard !reaches.isEmpty else { return }
        var filled = filledByThisRun
        if let ledger = backfill.ledger {
            do {
                filled.merge(try ledger.reaches(source: source)) { max($0, $1) }
            } catch {
                logger.warning("\(source): the ledger of filled history cannot be read: \(error); filling every symbol again")
            }
        }
        let now = Wallclock.millis()
        let needs = reaches.map { Backfill.Need(symbol: $0.key, reach: $0.value.reach, detail: $0.value.detail, until: now) }
        let logger = self.logger
        let entries = await evaluator.fillHistory(needs, source: backfill.source, http: backfill.http,
                                                  filled: filled, now: now) { line in
            switch line {
            case .info(let text): logger.info("\(text)")
            case .notice(let text): logger.notice("\(text)")
            case .warning(let text): logger.warning("\(text)")
            }
        }
        for entry in entries { filledByThisRun[entry.symbol] = max(filledByThisRun[entry.symbol] ?? 0, entry.reach) }
        guard persists, !entries.isEmpty else { return }
        await saveChanges()
        output.yield(.backfilled(entries))
    }

    private func emit(_ alert: Alert) {
        monitor.alerted(rule: alert.rule)
        gate.sent()
        output.yield(.alert(alert))
    }

    /// Hands what changed since the last save to the delivery task, behind the alerts before it.
    /// The `final` save moves each minute history into its snapshot instead of copying it (a
    /// day of minutes for every symbol is megabytes): the engine takes no tick after it. Any
    /// other save copies the histories, so it goes `symbolsPerSave` symbols at a time, each part
    /// written before the next is taken: only one part's copies exist at once.
    mutating func saveChanges(final: Bool = false) async {
        guard persists, evaluator.isReady else { return }
        lastSave = intervals()
        if final {
            let changes = evaluator.takeChanges(final: true)
            if !changes.isEmpty { output.yield(.save(changes, markets: nil)) }
            return
        }
        while true {
            let part = evaluator.takeChanges(limit: Self.symbolsPerSave)
            if part.isEmpty { return }
            await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in
                // A delivery input that has ended (shutdown) writes nothing: no need to wait.
                if case .terminated = output.yield(.save(part, markets: nil, written: { written.resume() })) {
                    written.resume()
                }
            }
        }
    }

    /// Symbols a save hands over at a time (see `saveChanges`).
    static let symbolsPerSave = 32

    /// Swaps in reloaded rules: a new engine takes over every symbol's state, so rules that did
    /// not change keep theirs (armed, cooldown, once) and changed or new rules start fresh.
    /// History the new rules need and neither the ledger nor this run filled yet (a longer
    /// window, a new symbol) is filled before the next tick is evaluated with them. Delivery
    /// gets the rules too, behind the alerts made before them (their priorities).
    mutating func reload(_ rules: RuleSet) async {
        await saveChanges()
        output.yield(.rules(rules))
        evaluator.reload(rules)
        if let backfill { await fillHistory(from: backfill) }
        logger.info("rules reloaded: \(rules.rules.count) rules")
    }

    /// Feed alerts go to every sink an enabled rule notifies, in first-use order.
    private var feedAlertSinks: [String] {
        let names = evaluator.ruleSet.usedSinks
        return names.isEmpty ? ["stdout"] : names
    }
}
