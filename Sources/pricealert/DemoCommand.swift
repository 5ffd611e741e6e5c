import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertSinks
import ArgumentParser
import DemoExchange
import Logging
import Platform

/// `pricealert demo`: the embedded exchange and `run` together, offline: the demo rules
/// against simulated BTSE prices, alerts on standard output.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the demo rules against the embedded exchange, offline, alerts on standard output.",
        discussion:
            "Uses Rules/demo.json from the current folder when present, else the built-in copy. Runs until Ctrl-C or --duration. The change rules' history is filled from the exchange's candles (the simulated market's past, as `run` fills it from a real exchange), so they can fire at once; with the default seed every demo rule fires within the first minute."
    )

    @Option(
        name: .customLong("rules"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "Rule files instead of the demo rules (--rules A B, or --rules A --rules B). Every alert is printed on standard output, and also sent to the other sinks its rule names. The simulated prices start near real ones of 2023 (BTC near 43000, ETH near 2300, SOL near 60) and move about as much as real ones: levels far from them are not reached.",
            valueName: "file"))
    var rules: [String] = []

    @Option(help: "Stop after this long (e.g. 30s).")
    var duration: DurationArgument?

    @Option(help: "Seed of the simulated prices (the same seed gives the same walk).")
    var seed: UInt64 = 1

    @Option(help: "How often the exchange publishes prices (e.g. 1s, 200ms).")
    var interval: DurationArgument = DurationArgument(.seconds(1))

    @OptionGroup var tuning: FeedTuning
    @OptionGroup var skew: TickSkewOption

    @OptionGroup var state: StateOption
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        Logs.bootstrap()
        RuleReload.ignoreUntilListening()
        let demoRules = RuleFiles.demo(given: rules, demoFile: DemoRules.path, builtIn: DemoRules.text)
        let ruleSet = try Inputs.rules(demoRules.rules)
        let sinks = try Inputs.sinks(for: ruleSet)
        let delivery = try await AlertDelivery.make(ruleSet: ruleSet, sinks: sinks, state: state)
        let loaded = try delivery.store.map(state.loadSaved)?.take() ?? []
        let logger = Logger(label: "pricealert")
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: seed, interval: interval.duration)))
        // The history the change rules need comes from the exchange's candles, as for `run`:
        // the simulated market's past, so they have a past to compare with from the first tick.
        let saved = SavedState(loaded)
        let port: Int
        do {
            port = try await exchange.start()
        } catch {
            StandardError.write("pricealert: error: the demo exchange could not start: \(error)")
            throw ExitCodes.unavailable
        }
        StandardError.write("demo: exchange on http://127.0.0.1:\(port); \(ruleSet.rules.count) rules; Ctrl-C stops")
        let outcome: LivePipeline.Outcome
        do {
            let runner = FeedRunner(
                source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: NIOHTTPClient.shared,
                options: skew.applied(to: tuning.options), logger: logger)
            outcome = try await LiveDaemon.run(
                ruleSet: ruleSet, feeds: [LiveFeed(runner: runner)], feedOptions: runner.options,
                delivery: delivery, options: daemon, duration: duration?.duration, logger: logger,
                rulePaths: demoRules.paths, saved: saved)
        } catch {
            await exchange.stop()
            throw error
        }
        await exchange.stop()
        StandardError.write("demo: \(outcome.stats.accepted) ticks, \(outcome.stats.alerts) alerts")
        if outcome.unwritten || outcome.stateLost != nil { throw ExitCodes.stateUnusable }
        if outcome.deliveryFailures > 0 { throw ExitCodes.deliveryFailed }
    }
}
