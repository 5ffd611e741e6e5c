import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertSinks
import ArgumentParser
import Platform

/// `pricealert markets`: the source's market list joined to its current prices.
struct MarketsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "markets",
        abstract: "List a source's markets with their current prices.",
        discussion: """
            With --changes, one column per window: the last price against the source's candle \
            close at now − W (hour candles; aggregators' sampled prices), "—" where the source has \
            none that far back.

            Exit codes: 0 listed, 69 the source could not be reached or answered something unusable.
            """)

    /// `--sort`: `symbol`, `price`, `change24h`, or `change:W` for a window of `--changes`.
    struct Sort: ExpressibleByArgument {
        var key: MarketSort

        init(_ key: MarketSort) {
            self.key = key
        }

        init?(argument: String) {
            guard let key = MarketSort(argument) else { return nil }
            self.key = key
        }

        var defaultValueDescription: String { key.text }

        static var allValueStrings: [String] { ["symbol", "price", "change24h", "change:W"] }
    }

    /// `--changes W,W…`: the windows, in the order given.
    struct Changes: ExpressibleByArgument {
        var windows: [ChangeWindow]

        init?(argument: String) {
            guard let windows = ChangeWindow.list(argument) else { return nil }
            self.windows = windows
        }
    }

    @OptionGroup var source: SourceOptions

    @Option(help: "Only markets whose symbol, name or base contains this text (case-insensitive).")
    var search: String?

    @Option(
        help:
            "symbol (A→Z), price (highest first), change24h (best 24 h performance first) or change:W for a --changes window (e.g. change:7d, best first)."
    )
    var sort = Sort(.symbol)

    @Option(
        help: ArgumentHelp(
            "Change columns from the source's candles for these windows (e.g. 24h,7d,30d,365d).", valueName: "W,W…"))
    var changes: Changes?

    @Option(help: "text (a table) or json (one object per line).")
    var format: AlertOutputFormat = .text

    func validate() throws {
        if case .change(let window) = sort.key, !(changes?.windows.contains { $0.label == window } ?? false) {
            throw ValidationError("--sort change:\(window) needs \(window) among --changes")
        }
    }

    func run() async throws {
        Logs.bootstrap()
        let feed = try source.make()
        let http = NIOHTTPClient.shared
        let markets: [Market]
        let ticks: [Tick]
        do {
            markets = try await feed.loadMarkets(http: http)
            ticks = try await feed.snapshot(http: http)
        } catch {
            StandardError.write("pricealert: error: \(feed.name): \(error)")
            throw ExitCodes.unavailable
        }
        var rows = MarketRow.join(markets, ticks)
        if let search { rows = rows.filter { $0.matches(search) } }
        let windows = changes?.windows ?? []
        if !windows.isEmpty {
            await MarketChanges.fill(&rows, windows: windows, source: feed, http: http, now: Wallclock.millis())
        }
        rows.sort(by: sort.key)
        let lines = format == .json ? rows.map { $0.json(windows: windows) } : MarketRow.table(rows, windows: windows)
        for line in lines { StandardOutput.shared.writeLine(line) }
    }
}
