import AlertModel
import Foundation

/// The exchanges the embedded exchange imitates besides BTSE, each served from the same
/// simulated prices on the same port (Docs/exchange.md#the-five-look-alikes). Every route of a
/// look-alike answers at the exchange's own path (`/api/v3/exchangeInfo`) and at the same path
/// under the look-alike's name (`/binance/api/v3/exchangeInfo`).
public enum Venue: String, CaseIterable, Sendable {
    case binance, coinbase, kraken, bybit, okx

    /// `/binance`, …: the prefix every route of the look-alike is also served under.
    public var prefix: String { "/" + rawValue }

    /// The currency the look-alike quotes its spot markets in.
    var quote: String {
        switch self {
        case .binance, .bybit, .okx: "USDT"
        case .coinbase, .kraken: "USD"
        }
    }
}

/// One demo spot market as a look-alike lists it. The demo's markets are quoted in USD; the
/// exchanges that quote their spot markets in USDT (Binance, Bybit, OKX) list them against USDT,
/// the others (Coinbase, Kraken) against USD, and a USDT-quoted exchange does not list USDT itself.
struct VenueMarket: Sendable, Equatable {
    /// The demo's key for the market's prices (`BTC`), as on the `MarketBoard`.
    let board: String
    /// The common asset codes (`BTC`, `USDT`).
    let base: String
    let quote: String
    /// The exchange's own symbol: `BTCUSDT`, `BTC-USD`, `BTC/USD` (Kraken websocket v2),
    /// `BTCUSDT`, `BTC-USDT`.
    let symbol: String

    /// The demo catalog's markets as `venue` lists them, in the catalog's order.
    static func demo(_ venue: Venue) -> [VenueMarket] {
        MarketCatalog.embedded.spot.compactMap { market in
            let base = market.base.uppercased()
            // A USDT-quoted exchange does not list USDT against itself.
            if venue.quote == "USDT", base == "USDT" { return nil }
            return VenueMarket(venue, board: market.symbol, base: base)
        }
    }

    /// The markets of an index by their key on the board.
    static func byBoard(_ index: [String: VenueMarket]) -> [String: VenueMarket] {
        Dictionary(index.values.map { ($0.board, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `markets` by the exchange's symbol.
    static func index(_ markets: [VenueMarket]) -> [String: VenueMarket] {
        Dictionary(markets.map { ($0.symbol, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

extension VenueMarket {
    /// The market of `base` (priced on the board as `board`) against `venue`'s quote, in its notation.
    init(_ venue: Venue, board: String, base: String) {
        let quote = venue.quote
        let symbol: String
        switch venue {
        case .binance, .bybit: symbol = base + quote
        case .okx, .coinbase: symbol = base + "-" + quote
        case .kraken: symbol = base + "/" + quote
        }
        self.init(board: board, base: base, quote: quote, symbol: symbol)
    }
}

/// One price step as every look-alike connection renders it: the markets that moved, with
/// their 24-hour figures after the step, and the exchange time of the step (epoch ms).
struct BoardUpdate: Sendable {
    let entries: [(board: String, entry: MarketBoard.Entry)]
    let time: Int64
}

/// The text forms the look-alikes share.
enum VenueText {
    /// A price or quantity as the exchanges send them: a JSON string of the number.
    static func string(_ x: Double) -> String {
        "\"" + number(x) + "\""
    }

    static func quote(_ s: String) -> String { JSONString.quote(s) }

    /// A figure as the exchanges quote it: at most `significantDigits` digits (`quoted`).
    static func number(_ x: Double) -> String { x.isFinite ? JSONNumber.format(quoted(x)) : "0" }

    /// Exchanges quote prices and quantities at their tick and lot sizes, at most 8 decimals
    /// (`"43251.12"`, `"0.00001234"`, `"16038.28770938"`), never the 17 significant digits of
    /// a `Double`'s shortest form; the look-alikes' random walks make such doubles, so each
    /// figure they send is rounded to this many significant digits (never to zero).
    static let significantDigits = 10

    /// `x` rounded to `significantDigits` significant digits: the nearest `Double` to a decimal
    /// of that many digits, so its shortest form has no more.
    static func quoted(_ x: Double) -> Double {
        guard x.isFinite, x != 0 else { return x }
        let shift = significantDigits - 1 - Int(log10(abs(x)).rounded(.down))
        guard abs(shift) <= 22 else { return x }
        let scale = pow(10.0, Double(abs(shift)))
        return shift >= 0 ? (x * scale).rounded() / scale : (x / scale).rounded() * scale
    }

    /// `2023-02-09T20:30:37.167000000Z`: RFC 3339 with nanoseconds, as Coinbase and Kraken
    /// stamp their messages (Kraken with microseconds: `digits` 6).
    static func rfc3339(_ millis: Int64, digits: Int = 9) -> String {
        var text = Timestamp.format(millis)
        guard digits > 3, text.hasSuffix("Z") else { return text }
        text.removeLast()
        return text + String(repeating: "0", count: digits - 3) + "Z"
    }

    /// The 24-hour figures in quote currency.
    static func quoteVolume(_ e: MarketBoard.Entry) -> Double { e.volume * e.last }

    /// The volume-weighted average price the look-alikes report: the middle of the day's range
    /// and the last price (the board keeps no trades).
    static func vwap(_ e: MarketBoard.Entry) -> Double { (e.high + e.low + e.last) / 3 }
}
