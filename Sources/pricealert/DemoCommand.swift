import AlertCore
import AlertFeeds
import AlertHTTP
import AlertRules
import AlertSinks
import ArgumentParser
import DemoExchange
import Logging
import Wallclock

#if canImport(Glibc)
import Glibc
#endif

/// `pricealert demo`: the embedded exchange and `run` together, offline: the demo rules
/// against simulated BTSE prices, alerts on standard output.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the demo rules against the embedded exchange, offline, alerts on standard output.",
        discussion: "Uses Rules/demo.json from the current folder when present, else the built-in copy. Runs until Ctrl-C or --duration. Without saved state (--state), the engine starts with the simulated market's minutes before the first price, so change rules can fire at once; with the default seed every demo rule fires within the first minute.")

    @Option(name: .customLong("rules"), parsing: .upToNextOption,
            help: ArgumentHelp("Rule files instead of the demo rules (--rules A B, or --rules A --rules B).", valueName: "file"))
    var rules: [String] = []

    @Option(help: "Stop after this long (e.g. 30s).")
    var duration: DurationArgument?

    @Option(help: "Seed of the simulated prices (the same seed gives the same walk).")
    var seed: UInt64 = 1

    @Option(help: "How often the exchange publishes prices (e.g. 1s, 200ms).")
    var interval: DurationArgument = DurationArgument(.seconds(1))

    @OptionGroup var tuning: FeedTuning

    @OptionGroup var state: StateOption
    @OptionGroup var daemon: DaemonOptions

    func run() async throws {
        Logs.bootstrap()
        StandardOutput.ignoreBrokenPipeSignal()
        RuleReload.ignoreUntilListening()
        let ruleSet = try loadRules()
        let sinks = try Inputs.sinks(for: ruleSet)
        let delivery = try await AlertDelivery.make(ruleSet: ruleSet, sinks: sinks, state: state)
        let loaded = try delivery.store.map(state.loadSaved)?.take() ?? []
        let logger = Logger(label: "pricealert")
        let exchange = DemoExchangeServer(configuration: ExchangeConfiguration(
            port: 0, prices: .randomWalk(seed: seed, interval: interval.duration)))
        // State saved in a state folder wins; otherwise the engine starts with the simulated
        // market's last minutes, so change rules have a past to compare with from the first tick.
        let past = loaded.isEmpty ? Self.past(exchange, rules: ruleSet, now: Wallclock.millis()) : []
        let saved = SavedState(loaded.isEmpty ? past : loaded)
        let port: Int
        do {
            port = try await exchange.start()
        } catch {
            StandardError.write("pricealert: error: the demo exchange could not start: \(error)")
            throw ExitCodes.unavailable
        }
        StandardError.write("demo: exchange on http://127.0.0.1:\(port); \(ruleSet.rules.count) rules; Ctrl-C stops")
        if let minutes = past.first?.minutes.count {
            StandardError.write("demo: the engine starts with the simulated market's last \(minutes) minutes, for the change rules")
        }
        let outcome: LivePipeline.Outcome
        do {
            outcome = try await LiveDaemon.run(
                ruleSet: ruleSet,
                runner: FeedRunner(source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: CurlHTTPClient.shared,
                                   options: tuning.options, logger: logger),
                delivery: delivery, options: daemon, duration: duration?.duration, logger: logger,
                rulePaths: rulePaths, saved: saved)
        } catch {
            await exchange.stop()
            throw error
        }
        await exchange.stop()
        StandardError.write("demo: \(outcome.stats.accepted) ticks, \(outcome.stats.alerts) alerts")
        if outcome.unwritten { throw ExitCodes.stateUnusable }
        if outcome.deliveryFailures > 0 { throw ExitCodes.deliveryFailed }
    }

    /// The exchange's minutes before its first step as saved engine state, as long as the
    /// rules' longest change window: each symbol's minute history up to the minute before `now`,
    /// and its start price as the previous price.
    static func past(_ exchange: DemoExchangeServer, rules: RuleSet, now: Int64) -> [SymbolSnapshot] {
        let windows = rules.rules.compactMap { rule -> Int64? in
            if case .change(let window, _) = rule.condition { return window / 60_000 }
            return nil
        }
        guard let longest = windows.max() else { return [] }
        let count = Int(min(longest, 1440)) + 1
        let minute = now / 60_000
        let minutes = Array((minute - Int64(count))..<minute)
        return exchange.history(minutes: count).map { symbol, closes in
            SymbolSnapshot(symbol: symbol, firstTime: minutes[0] * 60_000, lastTime: minute * 60_000 - 1,
                           lastPrice: closes.last, minutes: minutes, prices: closes)
        }
    }

    /// The files SIGHUP re-reads: the ones in use, if any.
    private var rulePaths: [String] {
        if !rules.isEmpty { return rules }
        return access(DemoRules.path, F_OK) == 0 ? [DemoRules.path] : []
    }

    private func loadRules() throws -> RuleSet {
        if !rules.isEmpty { return try Inputs.rules(rules) }
        if access(DemoRules.path, F_OK) == 0 { return try Inputs.rules([DemoRules.path]) }
        switch RuleLoader.load([RuleSource(path: "(built-in demo rules)", bytes: Array(DemoRules.text.utf8))]) {
        case .success(let ruleSet): return ruleSet
        case .failure(let errors):
            StandardError.write(lines: errors.diagnostics.map(\.description))
            throw ExitCodes.dataError
        }
    }
}
