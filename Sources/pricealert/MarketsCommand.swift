import AlertFeeds
import AlertHTTP
import AlertModel
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

    /// `symbol`, `price`, `change24h`, or `change:W` for a window of `--changes`.
    enum Sort: ExpressibleByArgument, Equatable {
        case symbol, price, change24h
        /// A `--changes` window, as written.
        case change(String)

        init?(argument: String) {
            switch argument {
            case "symbol": self = .symbol
            case "price": self = .price
            case "change24h": self = .change24h
            default:
                guard argument.hasPrefix("change:"), DurationText.parse(String(argument.dropFirst(7))) != nil else { return nil }
                self = .change(String(argument.dropFirst(7)))
            }
        }

        static var allValueStrings: [String] { ["symbol", "price", "change24h", "change:W"] }
    }

    @OptionGroup var source: SourceOptions

    @Option(help: "Only markets whose symbol, name or base contains this text (case-insensitive).")
    var search: String?

    @Option(help: "symbol (A→Z), price (highest first), change24h (best 24 h performance first) or change:W for a --changes window (e.g. change:7d, best first).")
    var sort: Sort = .symbol

    @Option(help: ArgumentHelp("Change columns from the source's candles for these windows (e.g. 24h,7d,30d,365d).", valueName: "W,W…"))
    var changes: ChangeWindows?

    @Option(help: "text (a table) or json (one object per line).")
    var format: AlertOutputFormat = .text

    func validate() throws {
        if case .change(let window) = sort, !(changes?.windows.contains { $0.label == window } ?? false) {
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
        if !windows.isEmpty { await MarketChanges.fill(&rows, windows: windows, source: feed, http: http, now: Wallclock.millis()) }
        rows.sort(by: sort)
        let lines = format == .json ? rows.map { $0.json(windows: windows) } : MarketRow.table(rows, windows: windows)
        for line in lines { StandardOutput.shared.writeLine(line) }
    }
}

/// One market with its latest price, if the snapshot had one.
struct MarketRow {
    var market: Market
    var price: Double?
    var change24h: Double?
    /// Percent change per `--changes` window label; absent: no candle that far back.
    var changes: [String: Double] = [:]

    static func join(_ markets: [Market], _ ticks: [Tick]) -> [MarketRow] {
        var latest: [String: Tick] = [:]
        for tick in ticks {
            let key = Symbol.normalize(tick.symbol)
            if let seen = latest[key], seen.time > tick.time { continue }
            latest[key] = tick
        }
        return markets.map { market in
            let tick = latest[Symbol.normalize(market.symbol)]
            return MarketRow(market: market, price: tick?.price, change24h: tick?.change24h)
        }
    }

    func matches(_ text: String) -> Bool {
        let needle = text.lowercased()
        return [market.symbol, market.name, market.base].contains { $0.lowercased().contains(needle) }
    }

    func json(windows: [ChangeWindows.Window]) -> String {
        let changes = windows.isEmpty ? "" : ",\"changes\":{" + windows.map { window in
            "\(JSONString.quote(window.label)):\(self.changes[window.label].map(JSONNumber.format) ?? "null")"
        }.joined(separator: ",") + "}"
        return "{\"symbol\":\(JSONString.quote(market.symbol)),\"name\":\(JSONString.quote(market.name)),"
            + "\"base\":\(JSONString.quote(market.base)),\"quote\":\(JSONString.quote(market.quote)),"
            + "\"future\":\(market.future),\"active\":\(market.active),"
            + "\"price\":\(price.map(JSONNumber.format) ?? "null"),\"change24h\":\(change24h.map(JSONNumber.format) ?? "null")\(changes)}"
    }

    /// What a cell without a value shows: no price, no 24 h change, no candle that far back.
    static let missing = "—"

    /// Aligned columns: SYMBOL NAME PAIR TYPE PRICE 24H% (the source's own 24 h change), then
    /// one per `--changes` window, named as `--sort` names it (`CHANGE:7D%`), so a `24h` window
    /// from the candles is never mistaken for the source's figure. Every header is distinct. A control character
    /// the feed put in a name or symbol is escaped: one row stays one line.
    static func table(_ rows: [MarketRow], windows: [ChangeWindows.Window] = []) -> [String] {
        let header = ["SYMBOL", "NAME", "PAIR", "TYPE", "PRICE", "24H%"] + windows.map { "CHANGE:" + $0.label.uppercased() + "%" }
        let cells = rows.map { row in
            [row.market.symbol, row.market.name, "\(row.market.base)/\(row.market.quote)",
             row.market.future ? "future" : "spot" + (row.market.active ? "" : " (inactive)"),
             row.price.map(JSONNumber.format) ?? missing,
             row.change24h.map { MessageTemplate.percent($0) } ?? missing]
                + windows.map { window in row.changes[window.label].map { MessageTemplate.percent($0) } ?? missing }
        }.map { $0.map { UserText.escapingControls($0) } }
        let widths = header.indices.map { i in ([header] + cells).map { $0[i].count }.max() ?? 0 }
        return ([header] + cells).map { line in
            line.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return i >= 4 ? pad + cell : cell + pad  // numbers right-aligned
            }.joined(separator: "  ")
        } + ["\(rows.count) markets"]
    }
}

extension Array where Element == MarketRow {
    mutating func sort(by key: MarketsCommand.Sort) {
        switch key {
        case .symbol: sort { $0.market.symbol < $1.market.symbol }
        case .price: sort { ($0.price ?? -.infinity, $1.market.symbol) > ($1.price ?? -.infinity, $0.market.symbol) }
        case .change24h: sort { ($0.change24h ?? -.infinity, $1.market.symbol) > ($1.change24h ?? -.infinity, $0.market.symbol) }
        case .change(let window):
            sort { ($0.changes[window] ?? -.infinity, $1.market.symbol) > ($1.changes[window] ?? -.infinity, $0.market.symbol) }
        }
    }
}
