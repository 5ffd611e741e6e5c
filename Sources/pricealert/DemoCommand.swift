import AlertEngine
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
/// against simulated BTSE prices, and the consensus rules against three of its look-alikes, one
/// of them showing a wick on BTC; alerts on standard output.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the demo rules against the embedded exchange, offline, alerts on standard output.",
        discussion:
            "Uses Rules/demo.json and Rules/demo-consensus.json from the current folder when both are present, else their built-in copies. Every source the rule files define without an endpoint is followed at the embedded exchange, under its look-alike's path (http://127.0.0.1:PORT/okx, ...). The exchange shows a wick on OKX's BTC (its price times 1.1; the other look-alikes show the true price), so the rule on OKX's BTC fires and the rule on the median of three exchanges' BTC does not. A source with an endpoint is followed there, a type without a look-alike (poloniex, coingecko, ...) at its own address. Runs until Ctrl-C or --duration. The change rules' history is filled from the exchange's candles (the simulated market's past, as `run` fills it from a real exchange), so they can fire at once; with the default seed every demo rule fires within the first minute."
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
        let demoRules = RuleFiles.demo(
            given: rules,
            demoFiles: [(DemoRules.path, DemoRules.text), (DemoConsensusRules.path, DemoConsensusRules.text)])
        let ruleSet = try Inputs.rules(demoRules.rules)
        let sinks = try Inputs.sinks(for: ruleSet)
        let delivery = try await AlertDelivery.make(ruleSet: ruleSet, sinks: sinks, state: state)
        var loaded: [SymbolSnapshot] = []
        if let store = delivery.store { loaded = try await StoreOption.loadSaved(store).take() }
        let logger = Logger(label: "pricealert")
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: seed, interval: interval.duration),
                faults: ExchangeFaults(wick: Self.wick)))
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
        StandardError.write(
            "demo: \(Self.wick.venue.rawValue) shows \(Self.wick.market) at \(Self.wick.factor) times its price (a wick); the other exchanges show the true price"
        )
        let outcome: LivePipeline.Outcome
        do {
            let http = NIOHTTPClient.shared
            let options = skew.applied(to: tuning.options)
            let exchangeURL = "http://127.0.0.1:\(port)"
            let makeRunner: @Sendable (SourceDefinition) throws -> FeedRunner = { definition in
                FeedRunner(
                    source: try SourceRegistry.make(
                        definition.type, endpoint: Self.endpoint(of: definition, exchange: exchangeURL)),
                    http: http, options: options, logger: logger)
            }
            let runner = FeedRunner(
                source: BTSESource(endpoint: exchangeURL), http: http, options: options, logger: logger)
            var feeds = [LiveFeed(runner: runner)]
            for definition in ruleSet.sources {
                feeds.append(LiveFeed(name: definition.name, tag: definition.name, runner: try makeRunner(definition)))
            }
            outcome = try await LiveDaemon.run(
                ruleSet: ruleSet, feeds: feeds, feedOptions: options, makeRunner: makeRunner,
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

    /// The wick the demo shows: OKX's BTC 10 % above the price every other exchange shows.
    static let wick = Wick(venue: .okx, market: "BTC", factor: 1.1)

    /// Where `demo` follows a source the rule files define: its own endpoint when the file gives
    /// one; else the embedded exchange's look-alike of its type (BTSE at the root), so the demo
    /// stays offline; a type the exchange has no look-alike of keeps its own default.
    static func endpoint(of definition: SourceDefinition, exchange: String) -> String? {
        if let endpoint = definition.endpoint { return endpoint }
        if let venue = Venue(rawValue: definition.type) { return exchange + venue.prefix }
        return definition.type == "btse" ? exchange : nil
    }
}
