import AlertHTTP
import AlertModel

/// OKX v5 REST: `GET /api/v5/public/instruments?instType=SPOT`, and candles from
/// `GET /api/v5/market/candles` (recent) and `/api/v5/market/history-candles` (older). Docs:
/// https://www.okx.com/docs-v5/en/#public-data-rest-api-get-instruments,
/// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-candlesticks,
/// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-candlesticks-history
/// All answer `{"code":"0","msg":"","data":[…]}`; a `code` other than 0 is the failure.
public enum OKXMarkets {
    public static let path = "/api/v5/public/instruments?instType=SPOT"

    /// `data[]`: `{"instType":"SPOT","instId":"BTC-USDT","baseCcy":"BTC","quoteCcy":"USDT","state":"live",…}`;
    /// only `SPOT`; active is `state == "live"`.
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeMarket], FeedPayloadError> {
        OKXREST.data(body, context: "OKX instruments").map { entries in
            entries.compactMap { entry in
                guard (entry["instType"]?.string ?? "SPOT") == "SPOT", let id = ExchangeJSON.symbol(entry["instId"]),
                    let base = ExchangeJSON.symbol(entry["baseCcy"]), let quote = ExchangeJSON.symbol(entry["quoteCcy"])
                else { return nil }
                return ExchangeMarket(
                    exchangeSymbol: id, base: base.uppercased(), quote: quote.uppercased(),
                    active: entry["state"]?.string == "live")
            }
        }
    }
}

public enum OKXCandles {
    /// `candles`: `limit` ≤ 300, and only the most recent 1 440 candles of a bar.
    public static let maxCandles = 300
    public static let recentDepth = 1_440
    /// `history-candles`: `limit` ≤ 100, back to the market's listing.
    public static let maxHistoryCandles = 100

    public static func code(_ interval: ExchangeInterval) -> String {
        switch interval {
        case .minute: "1m"
        case .fiveMinutes: "5m"
        case .fifteenMinutes: "15m"
        case .hour: "1H"
        case .fourHours: "4H"
        case .day: "1Dutc"
        }
    }

    /// OKX pages backwards: `after` asks for candles older than this time (epoch ms).
    /// `history` picks `history-candles` (older than the recent 1 440).
    public static func request(
        instID: String, interval: ExchangeInterval, olderThan after: Int64, history: Bool,
        endpoint: String = "https://www.okx.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, history ? "/api/v5/market/history-candles" : "/api/v5/market/candles",
                [
                    ("instId", instID), ("bar", code(interval)), ("after", String(after)),
                    ("limit", String(history ? maxHistoryCandles : maxCandles))
                ]))
    }

    /// `data[]` rows `["ts", "o", "h", "l", "c", "vol", "volCcy", "volCcyQuote", "confirm"]`,
    /// newest first, `ts` in epoch ms; the candle is `[ts, ts + interval)`. Both endpoints.
    public static func parse(_ body: [UInt8], interval: ExchangeInterval) -> Result<CandlePage, FeedPayloadError> {
        OKXREST.data(body, context: "OKX candles").map { CandlePage.startRows($0, interval: interval) }
    }
}

enum OKXREST {
    static func data(_ body: [UInt8], context: String) -> Result<[FeedJSON], FeedPayloadError> {
        FeedJSON.parse(body, context: context).flatMap { json in
            let code = json["code"]?.string ?? json["code"]?.integer.map(String.init)
            if let code, code != "0" {
                let message = json["msg"]?.string.map(ExchangeJSON.text) ?? ""
                return .failure(FeedPayloadError("\(context): error \(ExchangeJSON.text(code)): \(message)"))
            }
            guard let data = json["data"]?.array else {
                return .failure(FeedPayloadError(#"\#(context): no "data" array"#))
            }
            return .success(data)
        }
    }
}

/// OKX v5 `GET /api/v5/market/tickers?instType=SPOT`. Docs:
/// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-tickers
public enum OKXTickers {
    public static let path = "/api/v5/market/tickers?instType=SPOT"

    /// `data[]` entries of the websocket `tickers` shape (`instId`, `last`, `open24h`,
    /// `volCcy24h`, `ts`), read as the websocket's (rules v3 §2).
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeTick], FeedPayloadError> {
        let context = "OKX tickers"
        return OKXREST.data(body, context: context).map { entries in
            var collector = TickCollector(context)
            for entry in entries { OKXTicker.add(entry, to: &collector) }
            return collector.ticks
        }
    }
}
