import AlertHTTP
import AlertModel

/// Bybit v5 REST: `GET /v5/market/instruments-info?category=spot` and `GET /v5/market/kline`.
/// Docs: https://bybit-exchange.github.io/docs/v5/market/instrument,
/// https://bybit-exchange.github.io/docs/v5/market/kline
/// Both answer `{"retCode":0,"retMsg":"OK","result":{…}}`; a non-zero `retCode` is the failure.
public enum BybitMarkets {
    public static let path = "/v5/market/instruments-info?category=spot"

    /// `result.list[]`: `{"symbol":"BTCUSDT","baseCoin":"BTC","quoteCoin":"USDT","status":"Trading",…}`;
    /// active is `status == "Trading"`.
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeMarket], FeedPayloadError> {
        BybitREST.list(body, context: "Bybit instruments-info").map { entries in
            entries.compactMap { entry in
                guard let symbol = ExchangeJSON.symbol(entry["symbol"]),
                    let base = ExchangeJSON.symbol(entry["baseCoin"]),
                    let quote = ExchangeJSON.symbol(entry["quoteCoin"])
                else { return nil }
                return ExchangeMarket(
                    exchangeSymbol: symbol, base: base.uppercased(), quote: quote.uppercased(),
                    active: entry["status"]?.string == "Trading")
            }
        }
    }
}

public enum BybitCandles {
    /// `limit` is at most 1000 (default 200); history goes back to the market's listing.
    public static let maxCandles = 1000

    public static func code(_ interval: ExchangeInterval) -> String {
        switch interval {
        case .minute: "1"
        case .fiveMinutes: "5"
        case .fifteenMinutes: "15"
        case .hour: "60"
        case .fourHours: "240"
        case .day: "D"
        }
    }

    public static func request(
        symbol: String, interval: ExchangeInterval, start: Int64, end: Int64,
        endpoint: String = "https://api.bybit.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/v5/market/kline",
                [
                    ("category", "spot"), ("symbol", symbol), ("interval", code(interval)), ("start", String(start)),
                    ("end", String(end)), ("limit", String(maxCandles))
                ]))
    }

    /// `result.list[]` rows `["startTime", "open", "high", "low", "close", "volume", "turnover"]`,
    /// newest first, times in epoch ms (as strings); the candle is `[start, start + interval)`.
    public static func parse(_ body: [UInt8], interval: ExchangeInterval) -> Result<CandlePage, FeedPayloadError> {
        BybitREST.list(body, context: "Bybit kline").map { CandlePage.startRows($0, interval: interval) }
    }
}

enum BybitREST {
    static func list(_ body: [UInt8], context: String) -> Result<[FeedJSON], FeedPayloadError> {
        FeedJSON.parse(body, context: context).flatMap { json in
            if let code = json["retCode"]?.integer, code != 0 {
                let message = json["retMsg"]?.string.map(ExchangeJSON.text) ?? ""
                return .failure(FeedPayloadError("\(context): error \(code): \(message)"))
            }
            guard let list = json["result"]?["list"]?.array else {
                return .failure(FeedPayloadError(#"\#(context): no "result.list" array"#))
            }
            return .success(list)
        }
    }
}

/// Bybit v5 `GET /v5/market/tickers?category=spot`. Docs:
/// https://bybit-exchange.github.io/docs/v5/market/tickers
public enum BybitTickers {
    public static let path = "/v5/market/tickers?category=spot"

    /// `result.list[]`: `{"symbol":"BTCUSDT","lastPrice":"20533.13","price24hPcnt":"-0.0029",
    /// "turnover24h":"…",…}` beside the response's `time` (epoch ms): the websocket's figures
    /// (`price24hPcnt` × 100).
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeTick], FeedPayloadError> {
        let context = "Bybit tickers"
        let time: Int64? =
            if case .success(let json) = FeedJSON.parse(body) { json["time"]?.integer } else { nil }
        return BybitREST.list(body, context: context).map { entries in
            var collector = TickCollector(context)
            for entry in entries {
                collector.add(
                    symbol: entry["symbol"], time: time, price: ExchangeJSON.figure(entry["lastPrice"]),
                    change24h: ExchangeJSON.figure(entry["price24hPcnt"]).map { $0 * 100 },
                    volume24h: ExchangeJSON.figure(entry["turnover24h"]))
            }
            return collector.ticks
        }
    }
}
