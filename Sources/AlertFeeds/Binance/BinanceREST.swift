import AlertHTTP
import AlertModel

/// Binance spot REST: the market list `GET /api/v3/exchangeInfo` and candles
/// `GET /api/v3/klines`. Docs:
/// https://developers.binance.com/docs/binance-spot-api-docs/rest-api/general-endpoints#exchange-information
/// https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints#klinecandlestick-data
public enum BinanceMarkets {
    public static let path = "/api/v3/exchangeInfo"

    /// `{"symbols":[{"symbol":"ETHBTC","status":"TRADING","baseAsset":"ETH","quoteAsset":"BTC",…}]}`:
    /// one market per entry with a symbol and both assets (others skipped); active is
    /// `status == "TRADING"`. `{"code":-1121,"msg":"…"}` is an error with its message.
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeMarket], FeedPayloadError> {
        let context = "Binance exchangeInfo"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard let entries = json["symbols"]?.array else {
                if let message = json["msg"]?.string {
                    return .failure(FeedPayloadError("\(context): error: \(ExchangeJSON.text(message))"))
                }
                return .failure(FeedPayloadError(#"\#(context): no "symbols" array"#))
            }
            return .success(
                entries.compactMap { entry in
                    guard let symbol = ExchangeJSON.symbol(entry["symbol"]),
                        let base = ExchangeJSON.symbol(entry["baseAsset"]),
                        let quote = ExchangeJSON.symbol(entry["quoteAsset"])
                    else { return nil }
                    return ExchangeMarket(
                        exchangeSymbol: symbol, base: base.uppercased(), quote: quote.uppercased(),
                        active: entry["status"]?.string == "TRADING")
                })
        }
    }
}

public enum BinanceCandles {
    /// `limit` is at most 1000 (default 500); history goes back to the market's listing.
    public static let maxCandles = 1000

    public static func code(_ interval: ExchangeInterval) -> String {
        switch interval {
        case .minute: "1m"
        case .fiveMinutes: "5m"
        case .fifteenMinutes: "15m"
        case .hour: "1h"
        case .fourHours: "4h"
        case .day: "1d"
        }
    }

    public static func request(
        symbol: String, interval: ExchangeInterval, start: Int64, end: Int64,
        endpoint: String = "https://api.binance.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/api/v3/klines",
                [
                    ("symbol", symbol), ("interval", code(interval)), ("startTime", String(start)),
                    ("endTime", String(end)), ("limit", String(maxCandles))
                ]))
    }

    /// Rows `[openTime, "open", "high", "low", "close", "volume", closeTime, …]`, oldest first;
    /// the candle is `[openTime, closeTime + 1)`, else `openTime` + the interval.
    public static func parse(_ body: [UInt8], interval: ExchangeInterval) -> Result<CandlePage, FeedPayloadError> {
        CandlePage.rows(body, context: "Binance klines") { row in
            guard let r = row.array, r.count >= 5, let start = r[0].integer, let o = r[1].number,
                let h = r[2].number, let l = r[3].number, let c = r[4].number
            else { return nil }
            let close = r.count > 6 ? r[6].integer : nil
            let end = close.flatMap { $0 >= start && $0 < Int64.max ? $0 + 1 : nil } ?? start &+ interval.millis
            return Candle(start: start, end: end, open: o, high: h, low: l, close: c)
        }
    }
}

/// Binance spot `GET /api/v3/ticker/24hr` (every symbol when no `symbol` is given). Docs:
/// https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints#24hr-ticker-price-change-statistics
public enum BinanceTickers {
    public static let path = "/api/v3/ticker/24hr"

    /// `[{"symbol":"BNBBTC","priceChangePercent":"-95.960","lastPrice":"4.00000200",
    /// "quoteVolume":"15.30000000","closeTime":1499869899040,…}]`: the same figures as the
    /// websocket's `P`, `c`, `q` and `E` (rules v3 §2), with `closeTime` as the time.
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeTick], FeedPayloadError> {
        let context = "Binance ticker/24hr"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard let entries = json.array else {
                if let message = json["msg"]?.string {
                    return .failure(FeedPayloadError("\(context): error: \(ExchangeJSON.text(message))"))
                }
                return .failure(FeedPayloadError("\(context): expected an array, found \(json.typeName)"))
            }
            var collector = TickCollector(context)
            for entry in entries {
                collector.add(
                    symbol: entry["symbol"], time: entry["closeTime"]?.integer,
                    price: ExchangeJSON.figure(entry["lastPrice"]),
                    change24h: ExchangeJSON.figure(entry["priceChangePercent"]),
                    volume24h: ExchangeJSON.figure(entry["quoteVolume"]))
            }
            return .success(collector.ticks)
        }
    }
}
