import AlertFeeds
import AlertModel
import AlertPipeline
import AlertPostgres
import ArgumentParser
import Logging
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
            pricealert at a time may use, or in a PostgreSQL store (--store, PRICEALERT_STORE): \
            then checks on several hosts can share it, and in each --interval one evaluates while \
            the others exit 0 doing nothing (Docs/postgres.md).

            Quiet when all is well: only the rules' own stdout sinks print. With --format, standard \
            output is the list of alerts alone, one per line, and the rules' stdout sinks print nothing.

            Exit codes: 0 done, 1 alerts fired (only with --exit-code), 65 rule file errors, \
            66 an input cannot be read, 69 a source cannot be reached (the other sources' \
            prices are still evaluated), 73 a sink or the state \
            folder cannot be set up, or an alert cannot be written to the outbox (the state is then \
            not saved), 74 deliveries failed or wait in the outbox for the next run, \
            75 the state folder is in use (another check or run is going on; this one did nothing), or the store \
            cannot be reached or a run uses it.
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

    @Option(
        help:
            "With a store: a check evaluates unless another evaluated it less than half this long ago, so checks run from cron on several hosts every INTERVAL evaluate once (e.g. 5m)."
    )
    var interval: DurationArgument = DurationArgument(.seconds(60))

    static let defaultMarketsEvery = DurationArgument(.seconds(3600))
    static let defaultDrainTimeout = DurationArgument(.seconds(10))

    @OptionGroup var state: StateOption
    @OptionGroup var postgres: StoreOption
    @OptionGroup var skew: TickSkewOption

    func validate() throws {
        if source != nil, ticks != nil { throw ValidationError("give either --source or --ticks") }
        if endpoint != nil, source == nil { throw ValidationError("--endpoint is used with --source") }
        if let source { try SourceOptions.check(source: source, endpoint: endpoint) }
    }

    func run() async throws {
        Logs.bootstrap()
        let url = try postgres.url(besides: state)
        var request = CheckRun.Request(
            rules: rules.files, source: source, endpoint: endpoint, ticks: ticks, history: history, markets: markets,
            marketsEvery: marketsEvery.duration, format: format, drainTimeout: drainTimeout.duration,
            state: state.path, maxTickSkew: skew.maxTickSkew.duration)
        if let url {
            let interval = interval.duration
            request.store = { () async throws(CommandFailure) in try await Self.open(url, interval: interval) }
        }
        let alerts = try await ExitCodes.exitingAsync { try await CheckRun.check(request) }
        if exitCode && alerts > 0 { throw ExitCode(1) }
    }

    /// The store `url` names, held for this check (`application_name` `pricealert check`), unless
    /// another check holds it or evaluated it less than half an `interval` ago: then nothing to
    /// do, said at debug level only (cron mails what a job prints). A `run` alive on it (its
    /// heartbeat), anything else holding it, or a store that cannot be reached, is exit 75 with
    /// the reason; one that cannot be used, 73.
    static func open(_ url: PostgresURL, interval: Duration) async throws(CommandFailure) -> CheckRun.StoreOpening {
        let logger = Logger(label: "pricealert")
        let store: PostgresStore
        do {
            store = try await PostgresStore.open(
                url, use: .init(exclusive: true, application: Self.application),
                logger: Logger(label: "pricealert.postgres"))
        } catch {
            if let holder = error.heldBy, error.holderApplication == Self.application {
                logger.debug("check: another check (\(holder)) is evaluating store \(url); nothing to do")
                return .nothingToDo
            }
            throw CommandFailure(
                error.unreachable || error.heldBy != nil ? .tempFail : .cannotCreate, error: "\(error)")
        }
        let last: (now: Int64, recent: PostgresStore.CheckEvaluation?)
        do {
            last = try await store.lastCheck(within: interval / 2)
        } catch {
            await store.close()
            throw CommandFailure(.cannotCreate, error: "\(error)")
        }
        // A `run` on the store evaluates the same rules: a check beside it would send its alerts
        // again. Runs take no lock (several share a store), so a run is one whose heartbeat is
        // fresh (`LeadershipService` writes one every 500 ms; a killed run's goes stale).
        let running: PostgresLeadership.Instance?
        do {
            running = try await store.leadership.instances().first { last.now - $0.seenAt < Self.runAlive }
        } catch {
            await store.close()
            throw CommandFailure(.cannotCreate, error: "\(error)")
        }
        if let running {
            await store.close()
            throw CommandFailure(
                .tempFail,
                error:
                    "store \(url) is in use by another pricealert: a run on \(UserText.double(running.host)) (pid \(running.pid)) was alive \(last.now - running.seenAt) ms ago; give a run and cron checks different stores"
            )
        }
        if let recent = last.recent {
            logger.debug(
                "check: store \(url) was evaluated \(last.now - recent.began) ms ago by pid \(recent.pid) on \(UserText.double(recent.host)), within half of --interval; nothing to do"
            )
            await store.close()
            return .nothingToDo
        }
        let began = last.now
        let me = PostgresLeadership.Instance.current(sources: [])
        return CheckRun.StoreOpening(store) {
            do {
                try await store.markChecked(began: began, host: me.host, pid: Int(me.pid))
            } catch {
                StandardError.write(
                    "pricealert: warning: \(error); a check on another host within this --interval may evaluate again")
            }
        }
    }

    /// The `application_name` of a check's session, by which another check knows it.
    static let application = "pricealert check"

    /// How recent a run's heartbeat must be (store clock, ms) for the run to count as alive:
    /// well above its 500 ms beat, so a busy run is never missed.
    static let runAlive: Int64 = 10_000
}
