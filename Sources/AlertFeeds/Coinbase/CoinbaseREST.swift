import AlertHTTP
import AlertModel

/// Coinbase Advanced Trade public REST: products `GET /api/v3/brokerage/market/products` and
/// candles `GET /api/v3/brokerage/market/products/{product_id}/candles`. Docs:
/// https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/rest-api (Public: List
/// Public Products, Get Public Product Candles).
public enum CoinbaseMarkets {
    public static let path = "/api/v3/brokerage/market/products"

    /// `{"products":[{"product_id":"BTC-USD","base_currency_id":"BTC","quote_currency_id":"USD",
    /// "status":"online","trading_disabled":false,"product_type":"SPOT",…}]}`: spot products
    /// only (`product_type` absent or `SPOT`); base and quote from the currency ids, else from
    /// `product_id`; active when `status` is `online` and trading is not disabled.
    public static func parse(_ body: [UInt8]) -> Result<[ExchangeMarket], FeedPayloadError> {
        let context = "Coinbase products"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard let entries = json["products"]?.array else {
                if let message = json["message"]?.string ?? json["error"]?.string {
                    return .failure(FeedPayloadError("\(context): error: \(ExchangeJSON.text(message))"))
                }
                return .failure(FeedPayloadError(#"\#(context): no "products" array"#))
            }
            return .success(
                entries.compactMap { entry in
                    guard let id = ExchangeJSON.symbol(entry["product_id"]),
                        (entry["product_type"]?.string ?? "SPOT") == "SPOT"
                    else { return nil }
                    let parts = id.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                    guard
                        let base = ExchangeJSON.symbol(entry["base_currency_id"])
                            ?? (parts.count == 2 ? parts[0] : nil),
                        let quote = ExchangeJSON.symbol(entry["quote_currency_id"])
                            ?? (parts.count == 2 ? parts[1] : nil),
                        !base.isEmpty, !quote.isEmpty
                    else { return nil }
                    let active =
                        entry["status"]?.string == "online" && entry["trading_disabled"]?.bool != true
                        && entry["is_disabled"]?.bool != true
                    return ExchangeMarket(
                        exchangeSymbol: id, base: base.uppercased(), quote: quote.uppercased(), active: active)
                })
        }
    }
}

public enum CoinbaseCandles {
    /// At most 350 candles per request (the docs' limit on `end − start` in granularities);
    /// history goes back to the product's listing.
    public static let maxCandles = 350

    public static func code(_ interval: ExchangeInterval) -> String {
        switch interval {
        case .minute: "ONE_MINUTE"
        case .fiveMinutes: "FIVE_MINUTE"
        case .fifteenMinutes: "FIFTEEN_MINUTE"
        case .hour: "ONE_HOUR"
        case .fourHours: "FOUR_HOUR"
        case .day: "ONE_DAY"
        }
    }

    /// `start`/`end` in epoch ms; Coinbase wants seconds.
    public static func request(
        productID: String, interval: ExchangeInterval, start: Int64, end: Int64,
        endpoint: String = "https://api.coinbase.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/api/v3/brokerage/market/products/\(Query.escape(productID))/candles",
                [
                    ("start", String(start / 1000)), ("end", String(end / 1000)), ("granularity", code(interval)),
                    ("limit", String(maxCandles))
                ]))
    }

    /// `{"candles":[{"start":"1639508050","low":"…","high":"…","open":"…","close":"…","volume":"…"}]}`,
    /// newest first, `start` in epoch seconds; the candle is `[start, start + interval)`.
    public static func parse(_ body: [UInt8], interval: ExchangeInterval) -> Result<CandlePage, FeedPayloadError> {
        let context = "Coinbase candles"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard let rows = json["candles"]?.array else {
                if let message = json["message"]?.string ?? json["error"]?.string {
                    return .failure(FeedPayloadError("\(context): error: \(ExchangeJSON.text(message))"))
                }
                return .failure(FeedPayloadError(#"\#(context): no "candles" array"#))
            }
            let candles = rows.compactMap { row -> Candle? in
                guard let seconds = row["start"]?.integer, abs(seconds) < Int64.max / 1000,
                    let o = row["open"]?.number, let h = row["high"]?.number,
                    let l = row["low"]?.number, let c = row["close"]?.number
                else { return nil }
                let start = seconds * 1000
                return Candle(start: start, end: start &+ interval.millis, open: o, high: h, low: l, close: c)
            }
            return .success(CandlePage(unordered: candles, skipped: rows.count - candles.count))
        }
    }
}

/// The 24-hour figures of Coinbase's public product list (the same
/// `GET /api/v3/brokerage/market/products` as `CoinbaseMarkets`): `price`,
/// `price_percentage_change_24h` and `volume_24h` (base volume, × `price` for the quote
/// volume, as the websocket's). The list carries no time: ticks get `receivedAt`.
public enum CoinbaseTickers {
    public static func parse(_ body: [UInt8], receivedAt: Int64) -> Result<[ExchangeTick], FeedPayloadError> {
        let context = "Coinbase products"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard let entries = json["products"]?.array else {
                return .failure(FeedPayloadError(#"\#(context): no "products" array"#))
            }
            var collector = TickCollector(context)
            for entry in entries where (entry["product_type"]?.string ?? "SPOT") == "SPOT" {
                CoinbaseTicker.add(
                    entry, time: receivedAt, change: "price_percentage_change_24h", volume: "volume_24h",
                    to: &collector)
            }
            return .success(collector.ticks)
        }
    }
}
