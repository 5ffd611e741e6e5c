import AlertModel
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore

/// `check` from its command line to its end: the state opened, the rules, sinks, silences and
/// saved state loaded, the prices read, evaluated, dispatched and saved (`CheckRun`).
extension CheckRun {
    /// What `check`'s command line gave (Docs/cli.md#check).
    public struct Request: Sendable {
        public var rules: [String]
        public var source: String?
        public var endpoint: String?
        public var ticks: String?
        public var history: String?
        /// `--markets` values, as given (`CommandInputs.marketOptions`).
        public var markets: [String]
        public var marketsEvery: Duration
        public var format: AlertOutputFormat?
        public var drainTimeout: Duration
        /// The state folder (nil: the default one), unless `store` is given.
        public var state: String?
        public var maxTickSkew: Duration
        /// Opens the PostgreSQL store `--store` (or `PRICEALERT_STORE`) names, once the rule files
        /// are read (nil: the state folder). The executable gives it: it links the client.
        public var store: (@Sendable () async throws(CommandFailure) -> StoreOpening)?

        public init(
            rules: [String], source: String?, endpoint: String?, ticks: String?, history: String?,
            markets: [String], marketsEvery: Duration, format: AlertOutputFormat?, drainTimeout: Duration,
            state: String?, maxTickSkew: Duration
        ) {
            self.rules = rules
            self.source = source
            self.endpoint = endpoint
            self.ticks = ticks
            self.history = history
            self.markets = markets
            self.marketsEvery = marketsEvery
            self.format = format
            self.drainTimeout = drainTimeout
            self.state = state
            self.maxTickSkew = maxTickSkew
        }
    }

    /// What opening a PostgreSQL store for `check` gave.
    public enum StoreOpening: Sendable {
        /// The store, held for this check, and what marks its evaluation once the state is saved.
        case open(any DurableStore, evaluated: @Sendable () async -> Void)
        /// Another check evaluates, or evaluated within this interval: this one does nothing
        /// (exit 0).
        case nothingToDo

        public init(_ store: any DurableStore, evaluated: @escaping @Sendable () async -> Void) {
            self = .open(store, evaluated: evaluated)
        }
    }

    /// Where `check` keeps its state and outbox: the state folder `state` names (nil: the
    /// default one), opened and locked without saying anything. The one place `check` opens its
    /// store; `StateAccess.opened` says what went wrong.
    public static func openStore(state: String?) -> Result<StateStore, StateError> {
        StateAccess.open(state)
    }

    /// One `check`; returns how many alerts fired. What ends it early is a `CommandFailure`
    /// (its exit status, Docs/cli.md, and what to say), or the read error of a tick file that
    /// fails while it is read.
    public static func check(_ request: Request) async throws -> Int {
        // A state folder that holds a database (every run after the first) opens (lock,
        // database, schema) while the rule files are read. A rule file's errors still come
        // first and alone; a folder opened for nothing is closed, and none is created for them.
        let folder = request.store == nil ? StateFolder.named(request.state) : nil
        let opening = folder?.hasDatabase == true ? Task { [path = request.state] in openStore(state: path) } : nil
        let ruleSet: RuleSet
        let missedKey: [UInt8]?
        let sinks: [String: any Sink]
        do {
            (ruleSet, missedKey) = try CommandInputs.rules(request.rules, cache: folder.map(RuleCache.init))
            sinks = try CommandInputs.sinks(for: ruleSet)
        } catch {
            if let opening, case .success(let store) = await opening.value { store.close() }
            throw error
        }
        if request.source == nil, request.ticks == nil, ruleSet.sources.isEmpty {
            if let opening, case .success(let store) = await opening.value { store.close() }
            throw CommandFailure(
                .usage,
                error: "no prices to check: give --source or --ticks, or define sources in a version 3 rule file")
        }
        let store: any DurableStore
        var evaluated: (@Sendable () async -> Void)?
        if let open = request.store {
            guard case .open(let opened, let mark) = try await open() else { return 0 }
            (store, evaluated) = (opened, mark)
        } else {
            store = try StateAccess.opened(await opening?.value ?? openStore(state: request.state))
        }
        if let missedKey, let folder = store.localFolder {
            RuleCache(folder: folder).store(ruleSet.rules, rulesEnds: ruleSet.rulesEnds, for: missedKey)
        }
        let marketFiles = try CommandInputs.marketOptions(request.markets, ruleSet: ruleSet)
        var evaluator = Evaluator(
            ruleSet: ruleSet, markets: nil,
            sourceMarkets: try CommandInputs.sourceMarkets(marketFiles.bySource, ruleSet: ruleSet))
        let prices = CheckPrices(
            source: request.source, endpoint: request.endpoint, ticks: request.ticks, markets: marketFiles.plain,
            marketsGiven: Set(marketFiles.bySource.keys), marketsEvery: request.marketsEvery,
            sources: ruleSet.sources)
        var silences = SilenceSet()
        let restored: Restored
        var historyRead = 0
        var unavailable: [String] = []
        let delivery: AlertDelivery
        do {
            if store.localFolder != nil {
                silences = try StateAccess.silences(request.state)
            } else {
                silences = SilenceSet(records: try await store.silenceRecords())
            }
            // A snapshot of the rule files' sources is live like `--source`'s: timed by now's clock.
            let live = request.source ?? (request.ticks == nil ? ruleSet.sources.first?.name : nil)
            restored = try await restore(
                &evaluator, from: store, source: live, maxTickSkew: request.maxTickSkew.milliseconds
            ) { saved, evaluator in
                try await input(
                    prices, saved: saved, keeper: store.sourceMarkets, into: &evaluator, unavailable: &unavailable)
            }
            historyRead = try request.history.map { try CommandInputs.seedHistory($0, into: &evaluator) } ?? 0
            delivery = try await AlertDelivery.setUp(ruleSet: ruleSet, sinks: sinks, store: store)
        } catch let failure as CommandFailure {
            await store.close()
            throw failure
        } catch {
            // The saved state, market list or silences cannot be read: say where, evaluate nothing.
            throw await StateAccess.unusable(durable: store, error)
        }
        var check = CheckRun(
            evaluator: consume evaluator, store: store, delivery: delivery, drainTimeout: request.drainTimeout,
            restored: restored)
        check.format = request.format
        check.printing = AlertListing.printingSinks(of: ruleSet)
        check.silences = silences
        check.evaluated = evaluated
        return try await check.evaluate(restored, prices: prices, historyRead: historyRead, unavailable: unavailable)
    }
}
