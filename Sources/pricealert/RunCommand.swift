import AlertFeeds
import AlertHTTP
import AlertPipeline
import AlertSinks
import ArgumentParser
import Logging
import Platform

/// `pricealert run`: the daemon. Loads the market list (and reloads it), follows live prices,
/// evaluates the rules and dispatches alerts, until SIGTERM or SIGINT.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Follow live prices and dispatch alerts until stopped.",
        discussion:
            "State (pair states, last prices, minute history, market list, outbox) is kept in the state folder and restored at start. SIGHUP re-reads the rule files (a file with errors keeps the running rules). When no price comes for --stale-after, the sinks get a stale-feed alert (@feed-stale), and @feed-recovered when prices return.\n\nExit codes: 0 stopped by a signal or --duration, 65 rule file errors, 66 unreadable rule file, 69 the --listen address cannot be bound, 73 a sink or the state folder cannot be set up, an alert could never be written to the outbox, or the state folder was deleted while in use, 74 alerts became dead letters (rows still pending wait in the outbox for the next start), 75 the state folder is in use by another pricealert."
    )

    @OptionGroup var rules: RulesOption

    @OptionGroup var source: SourceOptions
    @OptionGroup var tuning: FeedTuning
    @OptionGroup var skew: TickSkewOption

    @OptionGroup var state: StateOption
    @OptionGroup var daemon: DaemonOptions

    @Option(help: "Stop after this long (e.g. 10m); without it, run until SIGTERM/SIGINT.")
    var duration: DurationArgument?

    @Option(help: "How often the engine's state is saved in the state folder (it is also saved at shutdown).")
    var saveEvery: DurationArgument = DurationArgument(.seconds(60))

    func run() async throws {
        Logs.bootstrap()
        RuleReload.ignoreUntilListening()
        let ruleSet = try rules.load()
        let sinks = try Inputs.sinks(for: ruleSet)
        let store = try state.open()
        let saved = try state.loadSaved(store)
        let delivery = try await AlertDelivery.make(ruleSet: ruleSet, sinks: sinks, store: store)
        let http = NIOHTTPClient.shared
        let logger = Logger(label: "pricealert")
        let outcome = try await LiveDaemon.run(
            ruleSet: ruleSet,
            runner: FeedRunner(
                source: try source.make(), http: http, options: skew.applied(to: tuning.options), logger: logger),
            delivery: delivery, options: daemon, duration: duration?.duration, logger: logger,
            rulePaths: rules.files, saved: saved, saveEvery: saveEvery.duration)
        var summary =
            "run: \(outcome.stats.accepted) ticks, \(outcome.stats.droppedTotal) dropped, \(outcome.stats.alerts) alerts"
        if outcome.stats.unwatched > 0 {
            summary += "; \(outcome.stats.unwatched) ticks of symbols no rule applies to (not kept)"
        }
        StandardError.write(summary)
        if outcome.unwritten || outcome.stateLost != nil { throw ExitCodes.stateUnusable }
        if outcome.deliveryFailures > 0 { throw ExitCodes.deliveryFailed }
    }
}
