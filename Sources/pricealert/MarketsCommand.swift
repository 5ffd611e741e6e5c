import AlertCore
import AlertFeeds
import AlertHTTP
import AlertSinks
import ArgumentParser

/// `pricealert markets`: the source's market list joined to its current prices.
struct MarketsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "markets",
        abstract: "List a source's markets with their current prices.",
        discussion: "Exit codes: 0 listed, 69 the source could not be reached or answered something unusable.")

    enum Sort: String, ExpressibleByArgument, CaseIterable {
        case symbol, price, change24h
    }

    @OptionGroup var source: SourceOptions

    @Option(help: "Only markets whose symbol, name or base contains this text (case-insensitive).")
    var search: String?

    @Option(help: "symbol (A→Z), price (highest first) or change24h (best 24 h performance first).")
    var sort: Sort = .symbol

    @Option(help: "text (a table) or json (one object per line).")
    var format: AlertOutputFormat = .text

    func run() async throws {
        Logs.bootstrap()
        StandardOutput.ignoreBrokenPipeSignal()
        let feed = try source.make()
        let http = CurlHTTPClient.shared
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
        rows.sort(by: sort)
        for line in format == .json ? rows.map(\.json) : MarketRow.table(rows) {
            StandardOutput.shared.writeLine(line)
        }
    }
}

/// One market with its latest price, if the snapshot had one.
struct MarketRow {
    var market: Market
    var price: Double?
    var change24h: Double?

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

    var json: String {
        "{\"symbol\":\(JSONString.quote(market.symbol)),\"name\":\(JSONString.quote(market.name)),"
            + "\"base\":\(JSONString.quote(market.base)),\"quote\":\(JSONString.quote(market.quote)),"
            + "\"future\":\(market.future),\"active\":\(market.active),"
            + "\"price\":\(price.map(JSONNumber.format) ?? "null"),\"change24h\":\(change24h.map(JSONNumber.format) ?? "null")}"
    }

    /// Aligned columns: SYMBOL NAME PAIR TYPE PRICE 24H%.
    static func table(_ rows: [MarketRow]) -> [String] {
        let header = ["SYMBOL", "NAME", "PAIR", "TYPE", "PRICE", "24H%"]
        let cells = rows.map { row in
            [row.market.symbol, row.market.name, "\(row.market.base)/\(row.market.quote)",
             row.market.future ? "future" : "spot" + (row.market.active ? "" : " (inactive)"),
             row.price.map(JSONNumber.format) ?? "-",
             row.change24h.map { MessageTemplate.percent($0) } ?? "-"]
        }
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
        }
    }
}
