import AlertEngine
import AlertFeeds
import AlertModel
import AlertRules
import AlertStore
import Logging
import Operations
import Platform
import ServiceLifecycle
import Synchronization

/// The evaluator as a service: takes the feeds' events, reloaded rules and the history the
/// feeds' `BackfillService`s fetched from its inbox, in order, and hands alerts, saves and
/// listings to delivery, in order. It asks each feed's backfill for history and never waits for it. It never waits for a
/// sink, only for `AlertGate` when a burst leaves too many alerts on their way out, and when
/// the saves handed on are written more slowly than they are made (`saveChanges`). With a
/// state folder it hands on a save of the changed state every `saveEvery`, with each market
/// list, before a reload and at the end, and the known markets of `listed` rules when they
/// change, each behind the alerts made before it. Once the feed has stopped and every event in
/// the inbox is evaluated, its turn in the shutdown hands on the final save and finishes
/// delivery's input.
final class EvaluatorService: Service {
    let ruleSet: RuleSet
    let options: FeedOptions
    let logger: Logger
    let monitor: PipelineMonitor
    let inbox: Inbox<EvaluatorInput>
    let output: AsyncStream<DeliveryInput>.Continuation
    let gate: AlertGate
    let saved: SavedState
    /// Where saves go: nil without a state folder or store (nothing is saved, listings are not
    /// restored).
    let store: (any DurableStore)?
    let saveEvery: Duration
    /// The ledger of the history filled before (nil without a state folder or store).
    let ledger: (any BackfillRecorder)?
    /// The run follows a `--source` feed (its ticks without a source).
    let plainFeed: Bool
    /// Set when several instances share the store: what this one leads.
    let leases: SourceLeases?
    /// The counts of the run, once the service has returned.
    private let result = Mutex<Engine.Stats>(Engine.Stats())

    init(
        ruleSet: RuleSet, options: FeedOptions, logger: Logger, monitor: PipelineMonitor,
        inbox: Inbox<EvaluatorInput>, output: AsyncStream<DeliveryInput>.Continuation, gate: AlertGate,
        saved: SavedState, store: (any DurableStore)?, saveEvery: Duration, ledger: (any BackfillRecorder)?,
        plainFeed: Bool = false, leases: SourceLeases? = nil
    ) {
        self.plainFeed = plainFeed
        self.leases = leases
        self.ruleSet = ruleSet
        self.options = options
        self.logger = logger
        self.monitor = monitor
        self.inbox = inbox
        self.output = output
        self.gate = gate
        self.saved = saved
        self.store = store
        self.saveEvery = saveEvery
        self.ledger = ledger
    }

    var stats: Engine.Stats { result.withLock { $0 } }

    func run() async {
        var evaluation = LiveEvaluation(
            ruleSet: ruleSet, logger: logger, monitor: monitor, output: output, gate: gate)
        evaluation.maxTickSkew = options.maxTickSkew.milliseconds
        if let ledger {
            do {
                var reaches: [String: [String: Int64]] = [:]
                for entry in try await ledger.all() { reaches[entry.source, default: [:]][entry.symbol] = entry.reach }
                evaluation.ledger = reaches
            } catch {
                logger.warning("the ledger of filled history cannot be read: \(error); filling every symbol again")
                evaluation.ledger = [:]
            }
        }
        evaluation.hasPlainFeed = plainFeed
        evaluation.leases = leases
        if let store {
            evaluation.persist(restoring: saved.take(), every: saveEvery)
            await evaluation.restoreListings(from: store)
        } else {
            evaluation.restore(saved.take())
        }
        for await input in inbox {
            switch input {
            case .feed(let event, let origin): await evaluation.handle(event, from: origin)
            case .feedEnded(let origin): evaluation.ended(origin)
            case .reload(let rules): await evaluation.reload(rules)
            case .filled(let need, let candles, let entry): evaluation.filled(need, candles: candles, entry: entry)
            case .fillFinished: await evaluation.saveChanges()
            case .role(let change): await evaluation.roleChanged(change)
            case .saveMarks(let marks): evaluation.standby.trim(marks: marks, now: Wallclock.millis())
            case .refused(let refused): await evaluation.refused(refused)
            }
        }
        evaluation.finishBackfills()
        // The inbox ends when the feed has stopped; the final save waits for this service's
        // turn, so nothing it would hand on comes after it.
        try? await gracefulShutdown()
        await evaluation.saveChanges(final: true)
        output.finish()
        result.withLock { $0 = evaluation.stats }
    }
}

/// The evaluator service's state: the `Evaluator` (its engine made when the first market list
/// arrives) and what feed events mean for users.
struct LiveEvaluation {
    let logger: Logger
    let monitor: PipelineMonitor
    let output: AsyncStream<DeliveryInput>.Continuation
    let gate: AlertGate
    /// The bytes of the saves' copies handed to delivery and not written yet (`saveChanges`).
    let saveGate = AlertGate(limit: 2 * LiveEvaluation.bytesPerSavePart)
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
    /// The ledger of the history filled before, per source and symbol, as read at the start
    /// (nil without a state folder or store: every start fills again). Only this run adds to
    /// it, and `filledByThisRun` has what it adds.
    var ledger: [String: [String: Int64]]?
    /// The feeds that gave a market list and have not ended, in the order of their first list:
    /// each fills the history of its own keys (`fillHistory`).
    private var feeds: [FeedOrigin] = []
    /// The reach filled per symbol by this run: the ledger records a fill only after the save
    /// holding it, and without a state folder there is no ledger.
    private var filledByThisRun: [String: Int64] = [:]
    /// The reach per symbol asked of the backfill service and not answered yet.
    private var asked: [String: Int64] = [:]
    /// Fills seeded since the last save: recorded in the ledger behind the next one.
    private var unrecorded: [BackfillLedger.Entry] = []
    /// `--max-tick-skew` in ms (Docs/rules.md#ticks-from-the-future).
    var maxTickSkew: Int64 = FeedOptions.defaultMaxTickSkew.milliseconds
    /// The system clock against the monotonic one, read at each frame of ticks.
    private var clock = ClockStepWatch()
    /// Where the known markets of `listed` rules are kept (nil: no state folder or store).
    private var listingStore: (any DurableStore)?
    /// Each feed's last market list, by feed name, for `reportUnlisted`.
    private var lists: [String: UnlistedSymbols.Feed] = [:]
    /// The (feed, symbol) pairs `reportUnlisted` warned of under the running rules.
    private var unlistedWarned: Set<UnlistedSymbols.Finding> = []
    /// The run follows a `--source` feed, whose list counts before saying that no list has a symbol.
    var hasPlainFeed = false
    /// Set when several instances share the store (Docs/postgres.md#several-instances): events
    /// and state of a lease this instance does not lead are kept in `standby`, not handed on.
    var leases: SourceLeases?
    /// The leases this instance leads, by the role changes it was handed, with their epochs.
    private var led: [String: Int64] = [:]
    /// Each feed's newest market list to keep, by its tag (nil: ticks without a source), while
    /// this instance does not lead the home lease; saved when it does.
    private var unkeptLists: [String?: MarketsSave] = [:]
    /// What a standby evaluated for the leases it does not lead.
    var standby = StandbyBuffer()
    /// Symbols whose refused ticks were logged at warning (the rest at debug), at most `refusalsLogged`.
    private var refusedSymbols: Set<String> = []
    static let refusalsLogged = 100

    init(
        ruleSet: RuleSet, logger: Logger, monitor: PipelineMonitor, output: AsyncStream<DeliveryInput>.Continuation,
        gate: AlertGate
    ) {
        self.logger = logger
        self.monitor = monitor
        self.output = output
        self.gate = gate
        evaluator = Evaluator(waitingForMarketsWith: ruleSet)
    }

    /// The known markets of each market list a previous run saved (the list of ticks without a
    /// source, each rule-file source's); an unreadable list makes its next one count as the
    /// first. At a reload (`untrackedOnly`), only the lists not followed yet (a source the rule
    /// files added, the first `listed` rule) are read.
    mutating func restoreListings(from store: any DurableStore, untrackedOnly: Bool = false) async {
        listingStore = store
        guard evaluator.watchesListings else { return }
        let listings = store.listings
        do {
            evaluator.restoreListings(
                try await listings.load(sources: evaluator.ruleSet.sources.map(\.name)), untrackedOnly: untrackedOnly)
        } catch let error as ListingStoreError {
            logger.warning("\(error); the next market list is taken as the first")
        } catch {
            logger.warning(
                "cannot read \(listings.place): \(store.describe(error)); the next market list is taken as the first")
        }
    }

    /// The known markets that changed, kept by the engine until this instance leads the home
    /// lease (then `roleChanged` saves them).
    private mutating func saveListings() {
        guard persists, leadsHome, let listings = evaluator.takeChangedListings() else { return }
        output.yield(.listings(listings))
    }

    /// Restores `saved` into the engine when it is made, and saves changes every `every`.
    mutating func persist(restoring saved: [SymbolSnapshot], every: Duration) {
        persists = true
        restore(saved)
        saveEvery = every.milliseconds
        lastSave = intervals()
    }

    /// Restores `saved` into the engine when it is made, its times beyond the local clock and
    /// `--max-tick-skew` taken as not seen.
    mutating func restore(_ saved: [SymbolSnapshot]) {
        let now = Wallclock.millis()
        if let forgotten = evaluator.restore(saved, forgettingAfter: now + maxTickSkew) {
            logger.warning(
                "\(forgotten.warning(limit: now + maxTickSkew, why: "beyond the local clock and --max-tick-skew"))")
        }
    }

    /// Watches for a step of the system clock before a frame's ticks are evaluated: a step back
    /// makes the state's times after the new time not seen, as at a restart, so ticks timed by
    /// the new clock are not all out of order (Docs/rules.md#ticks-from-the-future).
    private mutating func watchClock(now: Int64) {
        guard let step = clock.step(wall: now, monotonic: Monotonic.milliseconds()) else { return }
        let size = DurationText.format(abs(step))
        guard step < 0 else {
            logger.warning(
                "the system clock moved forward by \(size) against the monotonic clock (set, stepped, or the machine was suspended)"
            )
            return
        }
        logger.warning(
            "the system clock stepped back by \(size) against the monotonic clock; ticks are timed by the new clock")
        if let forgotten = evaluator.forgetTimes(after: now) {
            logger.warning("\(forgotten.warning(limit: now, why: "after the new clock"))")
        }
    }

    /// A refused tick: logged with its source and reason, at warning for the first ticks of
    /// `refusalsLogged` symbols (a clock far off refuses every tick), at debug after that.
    private mutating func logRefused(_ drop: Drop, symbol: String) {
        if refusedSymbols.count < Self.refusalsLogged, refusedSymbols.insert(symbol).inserted {
            logger.warning("\(drop); later ones of this symbol at debug")
        } else {
            logger.debug("\(drop)")
        }
    }

    var stats: Engine.Stats { evaluator.stats }

    mutating func handle(_ event: FeedEvent, from origin: FeedOrigin) async {
        let source = origin.name
        if case .ticks = event {} else { origin.monitor.feed(event) }
        switch event {
        case .markets(let markets):
            let first = !feeds.contains { $0 === origin }
            if first { feeds.append(origin) }
            lists[origin.name] = UnlistedSymbols.Feed(
                name: origin.name, tag: origin.tag, subscribes: origin.subscribes, list: MarketList(markets))
            reportUnlisted()
            switch updateMarkets(MarketList(markets), from: origin) {
            case .replaced where first:
                saveListings()
                fillHistory()
                logger.info("\(source): \(markets.count) markets, \(evaluator.ruleSet.rules.count) rules")
            case .replaced:
                saveListings()
                logger.info("\(source): market list reloaded: \(markets.count) markets")
                // Markets that `match` rules newly reach get their history filled, beside the feed.
                fillHistory()
            case .madeEngine(let restored):
                saveListings()
                if restored > 0 { logger.info("\(source): restored the saved state of \(restored) symbols") }
                fillHistory()
                logger.info("\(source): \(markets.count) markets, \(evaluator.ruleSet.rules.count) rules")
                if evaluator.hasMatchRules, markets.isEmpty {
                    logger.warning("\(source): the market list is empty: 'match' rules apply to nothing")
                }
            }
            // The state folder keeps each feed's last list: the one of ticks without a source in
            // the database (what `check --source` reuses), each rule-file source's in a file of
            // its own (`SourceMarketStore`); either is followed when the exchange cannot give a
            // list at the next start. The kept list itself, followed meanwhile, is not written
            // again (as if fetched now).
            if persists, !(first && origin.kept == markets) {
                let list = MarketsSave(markets: markets, source: origin.tag ?? source, fetchedAt: Wallclock.millis())
                if leadsHome { keep(list, tag: origin.tag) } else { unkeptLists[origin.tag] = list }
            }
        case .ticks(let ticks):
            guard evaluator.isReady else { return }
            var accepted = 0
            var refused = 0
            let place = Drop.Place.feed(source: source)
            let now = Wallclock.millis()
            watchClock(now: now)
            let limit = now &+ maxTickSkew
            let traced = logger.logLevel <= .trace
            // A rule-file source's ticks carry its name (rules v3 §1); `--source`'s none.
            let tag = SourceNumber(origin.tag)
            for var tick in ticks {
                tick.sourceNumber = tag
                // At trace, each tick as the engine gets it, in order, as a tick line that
                // `replay --ticks` reads back (Docs/cli.md).
                if traced { logger.trace("tick \(TickFormat.json(tick))") }
                if let drop = evaluator.process(tick, at: place, into: &alerts, notAfter: limit) {
                    monitor.dropped(drop.reason)
                    if drop.reason == .aheadOfClock {
                        refused += 1
                        logRefused(drop, symbol: tick.symbol)
                    }
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
            origin.monitor.prices(accepted: accepted, allRefused: refused > 0 && refused == ticks.count)
            if accepted > 0, let leases { leases.evaluated(leases.lease(ofSource: origin.tag)) }
            saveListings()
            if persists, intervals() - lastSave >= saveEvery { await saveChanges() }
        case .dropped(let reason):
            // Counted whether or not the log line is written (a log message is made only when logged).
            let drop = evaluator.reject(reason, at: .feed(source: source))
            logger.debug("\(drop)")
        case .connected:
            event.log(source: source, to: logger)
        case .disconnected:
            event.log(source: source, to: logger)
            if let leases { leases.lostTrack(of: leases.lease(ofSource: origin.tag)) }
        case .stale(let silence):
            event.log(source: source, to: logger)
            if let leases { leases.lostTrack(of: leases.lease(ofSource: origin.tag)) }
            emit(
                FeedAlert.stale(
                    source: source, tag: origin.tag, silentFor: silence, staleAfter: origin.staleAfter,
                    at: Wallclock.millis(), notify: feedAlertSinks))
        case .recovered(let silence):
            event.log(source: source, to: logger)
            emit(
                FeedAlert.recovered(
                    source: source, tag: origin.tag, silentFor: silence, at: Wallclock.millis(),
                    notify: feedAlertSinks))
        }
    }

    /// The per-source market hand-off of `run` (rules v3 §3), in this one place: a rule-file
    /// source's list is that source's (`match` joins its ticks to it); the `--source` list is
    /// the list of ticks without a source, as in v1 and v2. The first list of any feed makes
    /// the engine. `listed` rules follow each list for its own ticks.
    private mutating func updateMarkets(_ list: MarketList, from origin: FeedOrigin) -> Evaluator.MarketsUpdate {
        guard let tag = origin.tag else { return evaluator.updateMarkets(list) }
        evaluator.updateMarkets(list, source: tag)
        return evaluator.makeEngineUnlessReady()
    }

    /// A feed whose source was removed: its history is no longer asked of it.
    mutating func ended(_ origin: FeedOrigin) {
        origin.backfill?.finish()
        feeds.removeAll { $0 === origin }
        lists[origin.name] = nil
    }

    /// Warns, once per feed and symbol under the running rules, of each symbol the rules name
    /// that the market list of the feed that would follow it lacks (`UnlistedSymbols`): it is
    /// never subscribed. Whether no list has an unqualified symbol is said once every feed has
    /// given its list. Each feed's count is its `pricealert_feed_unlisted_symbols` gauge.
    private mutating func reportUnlisted() {
        let ruleSet = evaluator.ruleSet
        let complete =
            ruleSet.sources.allSatisfy { lists[$0.name] != nil }
            && (!hasPlainFeed || lists.values.contains { $0.tag == nil })
        let findings = UnlistedSymbols.find(
            in: ruleSet, feeds: lists.values.sorted { $0.name < $1.name }, complete: complete)
        for finding in findings where unlistedWarned.insert(finding).inserted {
            logger.warning("\(finding)")
        }
        for feed in feeds {
            feed.monitor.metrics.unlistedSymbols.record(findings.count { $0.feed == feed.name })
        }
    }

    /// No more history is asked of any feed (the inbox has ended).
    mutating func finishBackfills() {
        for feed in feeds { feed.backfill?.finish() }
    }

    /// Asks each feed's backfill for the history of its keys that the rules need (`match`
    /// rules: under the market list in use) that neither the ledger, this run, nor a request
    /// still in flight covers as far back: a rule-file source for the keys `NAME:SYMBOL`, the
    /// `--source` feed for the keys without a source. Returns at once: ticks go on being
    /// evaluated while it fills, and each symbol's candles are seeded when they arrive (`filled`).
    private mutating func fillHistory() {
        // Before the first market list there is no engine to seed: that list asks for it all.
        guard evaluator.isReady else { return }
        let reaches = evaluator.historyReaches
        guard !reaches.isEmpty else { return }
        for feed in feeds {
            guard let requests = feed.backfill else { continue }
            let mine = reaches.filter { key, _ in
                feed.keyPrefix.map { key.hasPrefix($0) } ?? !key.contains(":")
            }
            if !mine.isEmpty { fillHistory(of: mine, from: feed, into: requests) }
        }
    }

    private mutating func fillHistory(
        of reaches: [String: Backfill.Reach], from feed: FeedOrigin,
        into requests: AsyncStream<BackfillService.Request>.Continuation
    ) {
        var filled = filledByThisRun.merging(asked) { max($0, $1) }
        if let reaches = ledger?[feed.name] { filled.merge(reaches) { max($0, $1) } }
        let now = Wallclock.millis()
        let needs = reaches.map {
            Backfill.Need(symbol: $0.key, reach: $0.value.reach, detail: $0.value.detail, until: now)
        }
        let todo = HistoryBackfill.todo(needs, filled: filled)
        guard !todo.isEmpty else { return }
        for need in todo { asked[need.symbol] = max(asked[need.symbol] ?? 0, need.reach) }
        requests.yield(BackfillService.Request(todo: todo, now: now))
    }

    /// One symbol's fill from the backfill service: its candles go into the engine now (history,
    /// highs and lows, coverage; no rule is evaluated on them), and its ledger entry is recorded
    /// after the next save, which holds them (at the end of the request, every `saveEvery`, at
    /// shutdown): a run stopped half way keeps what it filled.
    mutating func filled(_ need: Backfill.Need, candles: [Candle], entry: BackfillLedger.Entry?) {
        if asked[need.symbol] ?? 0 <= need.reach { asked[need.symbol] = nil }
        guard let entry else { return }
        if !candles.isEmpty { evaluator.seedHistory(candles, symbol: need.symbol) }
        filledByThisRun[entry.symbol] = max(filledByThisRun[entry.symbol] ?? 0, entry.reach)
        if persists { unrecorded.append(entry) }
    }

    /// Hands `alert` on to delivery; a standby for its lease keeps it instead (`standby`).
    private mutating func emit(_ alert: Alert) {
        if let leases {
            let lease = leases.lease(ofSource: alert.source)
            if led[lease] == nil {
                keepAsStandby(alert, lease: lease)
                return
            }
        }
        monitor.alerted(rule: alert.rule)
        gate.sent()
        output.yield(.alert(alert))
    }

    /// Events emitted while this instance counted itself the leader of their lease, whose write
    /// the store dropped because another instance leads it under `leaderEpoch`: the lease was
    /// lost before the role change came (a pause), so no standby kept them but this one. While
    /// this instance leads the lease under a later epoch they are handed on again at once (the
    /// ledger skips what was entered); otherwise they are kept as a standby keeps what it
    /// evaluates, and entered at the next takeover.
    mutating func refused(_ refused: RefusedEvents) async {
        guard let leases else { return }
        for alert in refused.alerts {
            let lease = leases.lease(ofSource: alert.source)
            if let mine = led[lease], let theirs = refused.leaderEpoch, mine > theirs {
                logger.debug(
                    "source \(lease): \(alert.id), refused under an earlier epoch, handed on again in epoch \(mine)")
                emit(alert)
                if gate.isFull { await gate.waitForRoom() }
            } else {
                logger.debug("source \(lease): \(alert.id), refused, kept for this instance's next takeover")
                keepAsStandby(alert, lease: lease)
            }
        }
    }

    private mutating func keepAsStandby(_ alert: Alert, lease: String) {
        if standby.add(alert, lease: lease, at: Wallclock.millis()) {
            logger.warning(
                "source \(lease): more than \(standby.limit) events evaluated as standby since the leader's last save; the oldest are forgotten"
            )
        }
    }

    /// Whether this instance saves what belongs to no source's own lease (the known markets,
    /// the market list of ticks without a source, the ledger of filled history): always with
    /// one instance, and while it leads the home lease with several.
    private var leadsHome: Bool {
        guard let leases else { return true }
        return led[leases.home] != nil
    }

    private func keep(_ list: MarketsSave, tag: String?) {
        output.yield(tag == nil ? .save([], markets: list) : .sourceMarkets(list))
    }

    /// A new role for a lease. Taking it over, the events evaluated as standby since the earlier
    /// leader's last committed save are handed on first, in order (the outbox's ledger enters
    /// only those the earlier leader did not: Docs/postgres.md#taking-over), then the state of
    /// its symbols is saved under the new epoch.
    mutating func roleChanged(_ change: RoleChange) async {
        guard let leases else { return }
        guard let epoch = change.epoch else {
            led[change.lease] = nil
            return
        }
        // From standby, or from an epoch lost without a standby between (what was emitted
        // under it and refused was handed back to `standby`).
        let before = led.updateValue(epoch, forKey: change.lease)
        guard before != epoch else { return }
        if change.lease == leases.home {
            // What the home lease covers and came while another instance (or no one) led it.
            if persists { for (tag, list) in unkeptLists { keep(list, tag: tag) } }
            unkeptLists.removeAll()
            saveListings()
        }
        let (events, snapshots) = standby.take(change.lease, leaseOfKey: leases.lease(ofKey:))
        logger.notice(
            "source \(change.lease): taking over in epoch \(epoch): entering the \(events.count) events evaluated since the earlier leader's last save (those it entered are skipped by id) and saving the state of \(snapshots.count) symbols"
        )
        for alert in events {
            emit(alert)
            if gate.isFull { await gate.waitForRoom() }
        }
        if persists, !snapshots.isEmpty { output.yield(.save(snapshots, markets: nil)) }
    }

    /// Hands what changed since the last save to the delivery task, behind the alerts before it.
    /// The `final` save moves each minute history into its snapshot instead of copying it (a
    /// day of minutes for every symbol is megabytes): the engine takes no tick after it. Any
    /// other save copies the histories, so it is taken `symbolsPerSave` symbols at a time and
    /// handed on in parts of about `bytesPerSavePart`, and before it takes more it waits until
    /// at most one part's worth of the copies handed on is unwritten (`saveGate`): the copies
    /// alive at once stay within about two parts, and the evaluator goes on evaluating while
    /// delivery writes the save; it waits only when the store falls behind.
    mutating func saveChanges(final: Bool = false) async {
        guard persists, evaluator.isReady else { return }
        lastSave = intervals()
        // The fills seeded before this save are recorded behind it (delivery records them once
        // every save before is written).
        defer {
            if !unrecorded.isEmpty, leadsHome { output.yield(.backfilled(unrecorded)) }
            unrecorded.removeAll()
        }
        if final {
            let changes = ledChanges(evaluator.takeChanges(final: true))
            if !changes.isEmpty { output.yield(.save(changes, markets: nil)) }
            return
        }
        var part: [SymbolSnapshot] = []
        var bytes = 0
        while true {
            if part.isEmpty { await saveGate.waitForRoom() }
            let taken = evaluator.takeChanges(limit: Self.symbolsPerSave)
            for snapshot in ledChanges(taken) {
                part.append(snapshot)
                bytes += snapshot.approximateBytes
            }
            guard taken.isEmpty || bytes >= Self.bytesPerSavePart else { continue }
            if !part.isEmpty {
                let (gate, count) = (saveGate, bytes)
                gate.sent(count)
                // A delivery input that has ended (shutdown) writes nothing: its copies are gone.
                if case .terminated = output.yield(.save(part, markets: nil, written: { gate.dispatched(count) })) {
                    gate.dispatched(count)
                }
                part = []
                bytes = 0
            }
            if taken.isEmpty { return }
        }
    }

    /// The snapshots of the leases this instance leads; a standby keeps the others' newest
    /// state in `standby` for a takeover.
    private mutating func ledChanges(_ changes: [SymbolSnapshot]) -> [SymbolSnapshot] {
        guard let leases else { return changes }
        var mine: [SymbolSnapshot] = []
        for snapshot in changes {
            if led[leases.lease(ofKey: snapshot.symbol)] != nil {
                mine.append(snapshot)
            } else {
                standby.state[snapshot.symbol] = snapshot
            }
        }
        return mine
    }

    /// Symbols a save takes from the engine at a time (see `saveChanges`).
    static let symbolsPerSave = 32
    /// The copies a part of a save holds before it is handed on (see `saveChanges`): 32
    /// symbols with a day of minute history each are about 0.7 MiB.
    static let bytesPerSavePart = 1 << 20

    /// Swaps in reloaded rules: a new engine takes over every symbol's state, so rules that did
    /// not change keep theirs (armed, cooldown, once) and changed or new rules start fresh.
    /// History the new rules need and neither the ledger nor this run filled yet (a longer
    /// window, a new symbol) is asked of the backfill service; ticks go on meanwhile. Delivery
    /// gets the rules too, behind the alerts made before them (their priorities).
    mutating func reload(_ rules: RuleSet) async {
        await saveChanges()
        output.yield(.rules(rules))
        if let leases {
            // Each source the files add has its own lease from here on; a removed one's is let go.
            leases.follow(sources: Set(rules.sources.map(\.name)))
            let kept = Set(leases.all)
            for lease in led.keys where !kept.contains(lease) { led[lease] = nil }
        }
        evaluator.reload(rules)
        if let listingStore { await restoreListings(from: listingStore, untrackedOnly: true) }
        unlistedWarned = []
        reportUnlisted()
        fillHistory()
        logger.info("rules reloaded: \(rules.rules.count) rules")
    }

    /// Feed alerts go to every sink an enabled rule notifies, in first-use order.
    private var feedAlertSinks: [String] {
        let names = evaluator.ruleSet.usedSinks
        return names.isEmpty ? ["stdout"] : names
    }
}
