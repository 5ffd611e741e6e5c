import AlertFeeds
import AlertModel
import AlertPipeline
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
        let request = CheckRun.Request(
            rules: rules.files, source: source, endpoint: endpoint, ticks: ticks, history: history, markets: markets,
            marketsEvery: marketsEvery.duration, format: format, drainTimeout: drainTimeout.duration,
            state: state.path, maxTickSkew: skew.maxTickSkew.duration)
        let alerts = try await ExitCodes.exitingAsync { try await CheckRun.check(request) }
        if exitCode && alerts > 0 { throw ExitCode(1) }
    }
}
