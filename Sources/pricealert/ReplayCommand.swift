import AlertModel
import AlertPipeline
import ArgumentParser

/// `pricealert replay`: evaluates a recorded tick file (Docs/rules.md#ticks) and lists the alerts.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Evaluate recorded ticks against rule files and list the alerts.",
        discussion: """
            Ticks are JSON Lines: {"time": 1700000000000, "symbol": "BTC", "price": 43000.5, "change24h": -1.25}.

            Standard output is the list of alerts alone, one per line (--format); bad lines, dropped \
            ticks and a summary go to standard error. With --dispatch, alerts also go to the sinks \
            the rules name, except the stdout ones (the list holds each alert once); webhook and exec \
            sinks go through the durable outbox in the state folder (--state, or the default one), \
            and replay waits up to 30 s for them before exiting. --dispatch delivers now; it is no \
            preview of when: silences, quiet hours and groups go by each event's time, but a sink's \
            rate, batching and retries go by the wall clock, so events a day apart can reach a \
            rate-limited sink in one message within seconds. To see what would be sent when, read \
            the list (each alert with its time) or --report.

            With --report, an HTML page (no external assets) shows what each rule would have sent \
            and a price chart per symbol with its events (Docs/rules.md).

            Exit codes: 0 done, 65 rule file errors, 66 an input cannot be read, 73 a sink, the report \
            file or the state folder cannot be set up, or an alert cannot be written to its outbox, 74 some \
            deliveries failed or still wait in the outbox \
            (with --dispatch), 75 the state folder is in use by another pricealert.
            """)

    @OptionGroup var rules: RulesOption

    @Option(help: "The recorded ticks, JSON Lines (- for standard input).")
    var ticks: String

    @Option(
        help:
            "History ticks, JSON Lines like --ticks: they fill windows, highs and lows before the first tick and fire nothing."
    )
    var history: String?

    @Option(
        help:
            "A BTSE initial/market payload, for 'match' rules on ticks without a source; NAME=FILE: the market list of the rule files' source NAME in its exchange's REST format (repeatable)."
    )
    var markets: [String] = []

    @Option(help: "How alerts are listed: text (one readable line each) or json (one object per line).")
    var format: AlertOutputFormat = .text

    @Option(
        help:
            "Also write an HTML page of what the rules would have sent: events per rule, kind and day, and a price chart per symbol."
    )
    var report: String?

    @Flag(help: "Also deliver alerts to the sinks the rules name.")
    var dispatch = false

    @OptionGroup var state: StateOption

    func validate() throws {
        if state.path != nil, !dispatch { throw ValidationError("--state is used with --dispatch") }
    }

    func run() async throws {
        Logs.bootstrap()
        let request = ReplayRun.Request(
            rules: rules.files, ticks: ticks, history: history, markets: markets, format: format, report: report,
            dispatch: dispatch, state: state.path)
        try await ExitCodes.exitingAsync { try await ReplayRun.replay(request) }
    }
}

extension AlertOutputFormat: ExpressibleByArgument {}
