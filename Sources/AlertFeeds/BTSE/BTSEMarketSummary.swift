/// One market of BTSE `GET https://api.btse.com/spot/api/v3.2/market_summary`.
public struct BTSESummary: Sendable, Equatable {
    /// The market symbol, `BTC-USD` (spot) or `BTCPFC` (futures), upper-cased.
    public var symbol: String
    public var base: String
    public var quote: String
    /// Last trade price; nil when null, missing or not a number.
    public var last: Double?
    /// 24-hour change, already in percent (`-4.633438649` = −4.63 %); nil when absent.
    public var percentageChange: Double?
    public var active: Bool
    public var futures: Bool

    public init(
        symbol: String, base: String, quote: String, last: Double?, percentageChange: Double?,
        active: Bool, futures: Bool = false
    ) {
        self.symbol = symbol
        self.base = base
        self.quote = quote
        self.last = last
        self.percentageChange = percentageChange
        self.active = active
        self.futures = futures
    }
}

/// BTSE's market summary: the one place with a 24-hour change for the `coinIndex` symbols,
/// which carry a price only. The body is an array of
/// `{"symbol":"BTC-USD","last":36976,"percentageChange":-4.633438649,"base":"BTC","quote":"USD","active":true,"futures":false,…}`
/// (shape from BTSE's API docs, "Market Summary"). Polled, so it is parsed as a tree.
public enum BTSEMarketSummary {
    public static let url = "https://api.btse.com/spot/api/v3.2/market_summary"

    /// The entries in body order. An entry without a string `symbol` is skipped; other fields
    /// may be null or missing (`last`/`percentageChange` become nil, `active`/`futures` false).
    public static func parse(_ body: [UInt8]) -> Result<[BTSESummary], FeedPayloadError> {
        FeedJSON.parseArray(body, context: "BTSE market_summary").map { $0.compactMap(summary) }
    }

    private static func summary(_ entry: FeedJSON) -> BTSESummary? {
        guard let symbol = entry["symbol"]?.string, !symbol.isEmpty else { return nil }
        return BTSESummary(
            symbol: symbol.uppercased(),
            base: entry["base"]?.string?.uppercased() ?? "",
            quote: entry["quote"]?.string?.uppercased() ?? "",
            last: entry["last"]?.number,
            percentageChange: entry["percentageChange"]?.number.flatMap { $0.isFinite ? $0 : nil },
            active: entry["active"]?.bool ?? false,
            futures: entry["futures"]?.bool ?? false)
    }

    /// The 24-hour change per index symbol: `base` `BTC` → `["BTC": -4.63]`, for the change24h
    /// of `coinIndex` ticks. Several markets share a base (`BTC-USD`, `BTC-USDT`, `BTCPFC`); the
    /// one used is chosen by, in this order of weight: active, not `futures`, a plain spot
    /// symbol `BASE-QUOTE` (BTSE's docs show `BTCPFC` with `futures: false`, so the flag alone
    /// is not enough), quoted in `preferredQuote`; among equals the first in the body.
    /// Entries without a change are ignored.
    public static func changeByIndexSymbol(
        _ summaries: [BTSESummary], preferredQuote: String = "USD"
    ) -> [String: Double] {
        var best: [String: (rank: Int, change: Double)] = [:]
        for s in summaries {
            guard let change = s.percentageChange, !s.base.isEmpty else { continue }
            let rank =
                (s.active ? 0 : 8) + (s.futures ? 4 : 0) + (s.symbol == "\(s.base)-\(s.quote)" ? 0 : 2)
                + (s.quote == preferredQuote ? 0 : 1)
            if let current = best[s.base], current.rank <= rank { continue }
            best[s.base] = (rank, change)
        }
        return best.mapValues { $0.change }
    }
}
