import AlertFeeds
import AlertModel
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore
import ArgumentParser
import Platform

/// `pricealert check`: one evaluation for cron. Takes one snapshot of prices (a source's REST
/// listing, or a tick file), evaluates it against the state saved by the previous run,
/// dispatches through the outbox, saves the state and exits. Consecutive checks over the pieces
/// of a stream give exactly the alerts of one `replay` of the whole stream.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Evaluate one price snapshot against saved state, dispatch, save, exit (for cron).",
        discussion: """
            Prices come from --source (one REST snapshot: btse market_summary, poloniex, coingecko, \
            coinranking) and from one snapshot of each source the rule files define (version 3), \
            or from --ticks (a JSON Lines tick file). State (pair states, last prices, \
            minute history, the market list) and the outbox live in the state folder, which one \
            pricealert at a time may use.

            Quiet when all is well: only the rules' own stdout sinks print. With --format, standard \
            output is the list of alerts alone, one per line, and the rules' stdout sinks print nothing.

            Exit codes: 0 done, 1 alerts fired (only with --exit-code), 65 rule file errors, \
            66 an input cannot be read, 69 a source cannot be reached (the other sources' \
            prices are still evaluated), 73 a sink or the state \
            folder cannot be set up, or an alert cannot be written to the outbox (the state is then \
            not saved), 74 deliveries failed or wait in the outbox for the next run, \
            75 the state folder is in use (another check or run is going on; this one did nothing).
            """)

    @OptionGroup var rules: RulesOption

    @Option(help: "Take prices from this source's REST API: \(SourceRegistry.names.joined(separator: ", ")).")
    var source: String?

    @Option(help: "The source's REST base URL, e.g. a local server.")
    var endpoint: String?

    @Option(help: "Take prices from this tick file (JSON Lines, - for standard input) instead of a source.")
    var ticks: String?

    @Option(
        help:
            "History ticks, JSON Lines like --ticks: they fill windows, highs and lows before the ticks and fire nothing."
    )
    var history: String?

    @Option(
        help:
            "A BTSE initial/market payload for 'match' rules (default: the source's list, else the saved one); NAME=FILE: the market list of the rule files' source NAME in its exchange's REST format, with --ticks (repeatable)."
    )
    var markets: [String] = []

    @Option(help: "How often a source's market list is fetched again; in between the saved one is used (e.g. 1h).")
    var marketsEvery: DurationArgument = Self.defaultMarketsEvery

    @Option(help: "List the alerts on standard output, text or json: then all it prints (stdout sinks are left out).")
    var format: AlertOutputFormat?

    @Flag(help: "Exit with 1 when alerts fired (and 0 when none did).")
    var exitCode = false

    @Option(help: "How long to wait for webhook and exec deliveries before leaving them to the next run.")
    var drainTimeout: DurationArgument = Self.defaultDrainTimeout

    static let defaultMarketsEvery = DurationArgument(.seconds(3600))
    static let defaultDrainTimeout = DurationArgument(.seconds(10))

    @OptionGroup var state: StateOption
    @OptionGroup var skew: TickSkewOption

    func validate() throws {
        if source != nil, ticks != nil { throw ValidationError("give either --source or --ticks") }
        if endpoint != nil, source == nil { throw ValidationError("--endpoint is used with --source") }
        if let source { try SourceOptions.check(source: source, endpoint: endpoint) }
    }

    func run() async throws {
        Logs.bootstrap()
        try StoreOption.refuseStoreVariable(besides: state, command: "check")
        // A state folder that holds a database (every run after the first) opens (lock,
        // database, schema) while the rule files are read. A rule file's errors still come
        // first and alone; a folder opened for nothing is closed, and none is created for them.
        let folder = StateFolder.named(state.path)
        let opening = folder?.hasDatabase == true ? Task { [path = state.path] in StateOption.open(path) } : nil
        let ruleSet: RuleSet
        let missedKey: [UInt8]?
        let sinks: [String: any Sink]
        do {
            (ruleSet, missedKey) = try Inputs.rules(rules.files, cache: folder.map(RuleCache.init))
            sinks = try Inputs.sinks(for: ruleSet)
        } catch {
            if let opening, case .success(let store) = await opening.value { store.close() }
            throw error
        }
        if source == nil, ticks == nil, ruleSet.sources.isEmpty {
            if let opening, case .success(let store) = await opening.value { store.close() }
            StandardError.write(
                "pricealert: error: no prices to check: give --source or --ticks, or define sources in a version 3 rule file"
            )
            throw ExitCodes.usage
        }
        let store = try StateOption.opened(await opening?.value ?? StateOption.open(state.path))
        if let missedKey {
            RuleCache(folder: store.folder).store(ruleSet.rules, rulesEnds: ruleSet.rulesEnds, for: missedKey)
        }
        let marketFiles = try Inputs.marketOptions(markets, ruleSet: ruleSet)
        var evaluator = Evaluator(
            ruleSet: ruleSet, markets: nil,
            sourceMarkets: try Inputs.sourceMarkets(marketFiles.bySource, ruleSet: ruleSet))
        let prices = CheckPrices(
            source: source, endpoint: endpoint, ticks: ticks, markets: marketFiles.plain,
            marketsGiven: Set(marketFiles.bySource.keys), marketsEvery: marketsEvery.duration,
            sources: ruleSet.sources)
        let silences: SilenceSet
        let restored: CheckRun.Restored
        var historyRead = 0
        var unavailable: [String] = []
        let delivery: AlertDelivery
        do {
            silences = try SilenceCommand.load(state.path)
            // A snapshot of the rule files' sources is live like `--source`'s: timed by now's clock.
            let live = source ?? (ticks == nil ? ruleSet.sources.first?.name : nil)
            restored = try await CheckRun.restore(
                &evaluator, from: store, source: live, maxTickSkew: skew.maxTickSkew.duration.milliseconds
            ) { saved, evaluator in
                do {
                    return try await CheckRun.input(prices, saved: saved, into: &evaluator, unavailable: &unavailable)
                } catch let failure as CheckInputFailure {
                    StandardError.write("pricealert: error: \(failure.message)")
                    switch failure.kind {
                    case .noInput: throw ExitCodes.noInput
                    case .dataError: throw ExitCodes.dataError
                    case .unavailable: throw ExitCodes.unavailable
                    }
                }
            }
            historyRead = try history.map { try Inputs.seedHistory($0, into: &evaluator) } ?? 0
            delivery = try await AlertDelivery.make(ruleSet: ruleSet, sinks: sinks, store: store)
        } catch let error as ExitCode {
            store.close()
            throw error
        } catch {
            // The saved state or market list cannot be read: say where, evaluate nothing.
            throw StateOption.unusable(store, error)
        }
        var check = CheckRun(
            evaluator: consume evaluator, store: store, delivery: delivery, drainTimeout: drainTimeout.duration,
            restored: restored)
        check.format = format
        check.printing = AlertListing.printingSinks(of: ruleSet)
        check.silences = silences
        let verdict: CheckVerdict
        do {
            verdict = try await check.evaluate(
                restored, prices: prices, historyRead: historyRead, unavailable: unavailable)
        } catch {
            throw ExitCodes.stateUnusable
        }
        switch verdict {
        case .sourcesUnavailable: throw ExitCodes.unavailable
        case .deliveriesFailed: throw ExitCodes.deliveryFailed
        case .done(let alerts): if exitCode && alerts > 0 { throw ExitCode(1) }
        }
    }
}
