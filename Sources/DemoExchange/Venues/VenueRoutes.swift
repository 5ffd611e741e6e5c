import AlertModel
import Foundation

/// What a look-alike's REST route answers: a status and a JSON body.
struct VenueResponse: Sendable {
    var status: Int
    var body: String

    static func ok(_ body: String) -> VenueResponse { VenueResponse(status: 200, body: body) }
}

/// A look-alike's REST route: its path as the exchange serves it (`{name}` for a path
/// parameter) and its answer to the query and path parameters.
struct VenueRoute: Sendable {
    let path: String
    let answer: @Sendable (_ query: [String: String], _ parameters: [String: String]) -> VenueResponse
}

/// A look-alike's websocket route: its path, the path parameter names, and the connection it
/// makes for a client (from the upgrade request's query and path parameters).
struct VenueSocketRoute: Sendable {
    let path: String
    let connect: @Sendable (_ query: [String: String], _ parameters: [String: String]) -> any VenueConnection
}

/// What every look-alike reads: the prices, the keep-alive rules and faults, and candles.
struct VenueContext: Sendable {
    let feed: PriceFeed
    let keepAlive: KeepAliveSettings
    let faults: FaultSettings
    let prices: PriceMode
    /// The markets each look-alike lists.
    let markets: VenueMarkets
    /// The symbols the random walk prices, in its order (the candles walk them back).
    let walkSymbols: [String]

    /// The board as `venue` shows it, after starting the feed (a REST request starts the
    /// prices, as BTSE's does): with the `wick` fault's market moved, when it is on `venue`.
    func board(_ venue: Venue) -> MarketBoard {
        feed.startIfNeeded()
        var board = feed.board
        if let wick = faults.current.wick, wick.venue == venue, let entry = board.entries[wick.market] {
            board.set(wick.market, entry.wicked(wick.factor))
        }
        return board
    }

    /// A price step as `venue` shows it: with the `wick` fault's market moved, when it is on `venue`.
    func update(_ update: BoardUpdate, for venue: Venue) -> BoardUpdate {
        guard let wick = faults.current.wick, wick.venue == venue else { return update }
        return BoardUpdate(
            entries: update.entries.map { board, entry in
                (board, board == wick.market ? entry.wicked(wick.factor) : entry)
            }, time: update.time)
    }

    /// Candles of `minutes` minutes of `board` (the demo's key, `BTC`), oldest first, as
    /// `(open time ms, open, high, low, close)`: the random walk's minutes before the feed
    /// started (`DemoCandles`), at most `limit` ending at or before `end` and starting at or
    /// after `start` (epoch ms; nil: no bound). Empty for a replay or an unknown market.
    func candles(
        board market: String, minutes: Int64, start: Int64?, end: Int64?, limit: Int, newestFirst: Bool = false
    ) -> [VenueCandle] {
        feed.startIfNeeded()
        guard case .randomWalk(let seed, let interval) = prices, let startedAt = feed.startedAt else { return [] }
        let book = DemoCandles(
            walk: RandomWalk(symbols: walkSymbols, seed: seed, interval: interval), startMinute: startedAt / 60_000)
        let from = start ?? 0
        let to = end.map { $0 + 1 } ?? (startedAt + 60_000)
        let rows = book.rows(symbol: market, resolution: minutes, start: from, end: to, limit: limit)
        let candles = rows.map {
            VenueCandle(time: Int64($0[0]) * 1000, open: $0[1], high: $0[2], low: $0[3], close: $0[4])
        }
        return newestFirst ? candles : candles.reversed()
    }
}

struct VenueCandle: Sendable, Equatable {
    let time: Int64
    let open, high, low, close: Double
    /// The base volume the look-alikes report for a candle (the walk keeps none): a figure
    /// that grows with the candle's range, so charts look alive.
    var volume: Double { max(1, (high - low) / max(close, 1e-12) * 1e6) }
}

/// Reads a client's control message: one JSON object, or nil. (JSONSerialization, not the feeds'
/// reader: FeedJSON is internal to AlertFeeds, and a control message is one small object.)
func jsonObject(_ text: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
}

/// A client's request id echoed back as JSON: a number stays a number, a string a string.
func jsonID(_ value: Any?) -> String {
    switch value {
    case let n as NSNumber: return n.stringValue
    case let s as String: return VenueText.quote(s)
    default: return "null"
    }
}

/// Candle widths in minutes by each exchange's interval names.
enum CandleWidths {
    static let binance: [String: Int64] = [
        "1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "2h": 120, "4h": 240, "6h": 360,
        "8h": 480, "12h": 720, "1d": 1440, "3d": 4320, "1w": 10080
    ]
}
