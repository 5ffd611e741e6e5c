import AlertModel

/// `markets --sort`: `symbol` (A→Z), `price`, `change24h` or a `--changes` window (highest
/// first, markets without a value last, ties by symbol).
public enum MarketSort: Equatable, Sendable {
    case symbol, price, change24h
    /// A `--changes` window, as written.
    case change(String)

    /// `symbol`, `price`, `change24h` or `change:W` (W a duration); nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "symbol": self = .symbol
        case "price": self = .price
        case "change24h": self = .change24h
        default:
            guard text.hasPrefix("change:"), DurationText.parse(String(text.dropFirst(7))) != nil else { return nil }
            self = .change(String(text.dropFirst(7)))
        }
    }

    /// As written on the command line.
    public var text: String {
        switch self {
        case .symbol: "symbol"
        case .price: "price"
        case .change24h: "change24h"
        case .change(let window): "change:" + window
        }
    }
}

/// One market with its latest price, if the snapshot had one.
public struct MarketRow: Sendable {
    public var market: Market
    public var price: Double?
    public var change24h: Double?
    /// Percent change per `--changes` window label; absent: no candle that far back.
    public var changes: [String: Double] = [:]

    public static func join(_ markets: [Market], _ ticks: [Tick]) -> [MarketRow] {
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

    public func matches(_ text: String) -> Bool {
        let needle = text.lowercased()
        return [market.symbol, market.name, market.base].contains { $0.lowercased().contains(needle) }
    }

    public func json(windows: [ChangeWindow]) -> String {
        let changes =
            windows.isEmpty
            ? ""
            : ",\"changes\":{"
                + windows.map { window in
                    "\(JSONString.quote(window.label)):\(self.changes[window.label].map(JSONNumber.format) ?? "null")"
                }.joined(separator: ",") + "}"
        return "{\"symbol\":\(JSONString.quote(market.symbol)),\"name\":\(JSONString.quote(market.name)),"
            + "\"base\":\(JSONString.quote(market.base)),\"quote\":\(JSONString.quote(market.quote)),"
            + "\"future\":\(market.future),\"active\":\(market.active),"
            + "\"price\":\(price.map(JSONNumber.format) ?? "null"),\"change24h\":\(change24h.map(JSONNumber.format) ?? "null")\(changes)}"
    }

    /// What a cell without a value shows: no price, no 24 h change, no candle that far back.
    public static let missing = "—"

    /// Aligned columns: SYMBOL NAME PAIR TYPE PRICE 24H% (the source's own 24 h change), then
    /// one per `--changes` window, named as `--sort` names it (`CHANGE:7D%`), so a `24h` window
    /// from the candles is never mistaken for the source's figure. Every header is distinct. A control character
    /// the feed put in a name or symbol is escaped: one row stays one line.
    public static func table(_ rows: [MarketRow], windows: [ChangeWindow] = []) -> [String] {
        let header =
            ["SYMBOL", "NAME", "PAIR", "TYPE", "PRICE", "24H%"]
            + windows.map { "CHANGE:" + $0.label.uppercased() + "%" }
        let cells = rows.map { row in
            [
                row.market.symbol, row.market.name, "\(row.market.base)/\(row.market.quote)",
                row.market.future ? "future" : "spot" + (row.market.active ? "" : " (inactive)"),
                row.price.map(JSONNumber.format) ?? missing,
                row.change24h.map { MessageTemplate.percent($0) } ?? missing
            ]
                + windows.map { window in row.changes[window.label].map { MessageTemplate.percent($0) } ?? missing }
        }.map { $0.map { UserText.escapingControls($0) } }
        let widths = header.indices.map { i in ([header] + cells).map { $0[i].count }.max() ?? 0 }
        return ([header] + cells).map { line in
            line.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return i >= 4 ? pad + cell : cell + pad // numbers right-aligned
            }.joined(separator: "  ")
        } + ["\(rows.count) markets"]
    }
}

extension Array where Element == MarketRow {
    public mutating func sort(by key: MarketSort) {
        switch key {
        case .symbol: sort { $0.market.symbol < $1.market.symbol }
        case .price: sort { ($0.price ?? -.infinity, $1.market.symbol) > ($1.price ?? -.infinity, $0.market.symbol) }
        case .change24h:
            sort { ($0.change24h ?? -.infinity, $1.market.symbol) > ($1.change24h ?? -.infinity, $0.market.symbol) }
        case .change(let window):
            sort {
                ($0.changes[window] ?? -.infinity, $1.market.symbol) > (
                    $1.changes[window] ?? -.infinity, $0.market.symbol
                )
            }
        }
    }
}
