import AlertHTTP
import AlertModel

/// CoinGecko price history, `GET https://api.coingecko.com/api/v3/coins/{id}/market_chart`
/// with `vs_currency` and `days` (CoinGecko API reference, "Coin Historical Chart Data by
/// ID"): `{"prices":[[ms, price], …],"market_caps":[…],"total_volumes":[…]}`, oldest first.
/// CoinGecko picks the spacing from `days`: 5-minutely for 1 day, hourly for 2–90 days, daily
/// (00:00 UTC) above 90 days; the last point is the current price.
///
/// - `id` is CoinGecko's coin id (`bitcoin`), not the symbol: symbols are not unique there.
/// - These are sampled prices, not OHLC: each point becomes a one-millisecond candle
///   (`CandlePage.points`), which seeds the price seen at that instant and nothing more.
/// - A point that is not `[number, number]` with a positive price is skipped.
/// - `{"error":"coin not found"}` and `{"status":{"error_message":"…"}}` are errors with the message.
public enum CoinGeckoMarketChart {
    /// The request for the last `days` days (whole days, at least 1) of `id` in `vsCurrency`.
    public static func request(
        id: String, days: Int, vsCurrency: String = "usd",
        endpoint: String = "https://api.coingecko.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/api/v3/coins/\(Query.escape(id))/market_chart",
                [
                    ("vs_currency", vsCurrency), ("days", String(max(1, days)))
                ]))
    }

    /// The smallest `days` whose history reaches `span` milliseconds back, plus one day so the
    /// first point lies before the span's start whatever the time of day.
    public static func days(covering span: Int64) -> Int {
        Int((max(0, span) + 86_399_999) / 86_400_000) + 1
    }

    public static func parse(_ body: [UInt8]) -> Result<CandlePage, FeedPayloadError> {
        let context = "CoinGecko market_chart"
        return FeedJSON.parse(body, context: context).flatMap { json in
            if let message = json["status"]?["error_message"]?.string ?? json["error"]?.string {
                return .failure(FeedPayloadError("\(context): error: \(message)"))
            }
            guard json.members != nil else {
                return .failure(FeedPayloadError("\(context): expected an object, found \(json.typeName)"))
            }
            guard let prices = json["prices"]?.array else {
                return .failure(FeedPayloadError(#"\#(context): no "prices" array"#))
            }
            var points: [(time: Int64, price: Double)] = []
            var skipped = 0
            for entry in prices {
                guard let pair = entry.array, pair.count >= 2, let time = pair[0].integer,
                    let price = usablePrice(pair[1].number)
                else {
                    skipped += 1
                    continue
                }
                points.append((time, price))
            }
            return .success(CandlePage.points(points, skipped: skipped))
        }
    }
}
