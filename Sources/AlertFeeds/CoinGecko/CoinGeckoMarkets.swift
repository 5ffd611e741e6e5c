import AlertModel

/// CoinGecko `GET https://api.coingecko.com/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1`:
/// an array of `{"id":"bitcoin","symbol":"btc","name":"Bitcoin","current_price":77671,
/// "price_change_percentage_24h":-0.95302,"last_updated":"2026-05-18T12:49:21.599Z",…}`.
///
/// - Symbol: `symbol` upper-cased (`btc` → `BTC`). CoinGecko symbols are not unique (many
///   coins call themselves `ETH`); every entry becomes a tick, in body order (rank order).
/// - Price: `current_price`; null (new or dead coins), missing, ≤ 0 → the entry is skipped.
/// - change24h: `price_change_percentage_24h`, already percent.
/// - Time: `last_updated` (RFC 3339), else the receive time.
/// - An error document (`{"status":{"error_code":429,"error_message":"…"}}`, `{"error":"…"}`)
///   is `.invalid` with the message.
/// Polled every ~30 s, so it is parsed as a tree.
public enum CoinGeckoMarkets {
    public static let url = "https://api.coingecko.com/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1"

    public static func ticks(_ body: [UInt8], receivedAt: Int64) -> FeedFrame {
        ticksCounting(body, receivedAt: receivedAt).frame
    }

    public static func ticksCounting(_ body: [UInt8], receivedAt: Int64) -> ParsedFrame {
        switch entries(body) {
        case .failure(let error): return ParsedFrame(.invalid(error.reason))
        case .success(let entries):
            return CoinList.ticks(entries, price: "current_price", change: "price_change_percentage_24h") { entry in
                entry["last_updated"]?.string.flatMap { Timestamp.parse(Array($0.utf8)) } ?? receivedAt
            }
        }
    }

    /// One market per entry with a symbol: base = the symbol, quote = `vsCurrency` upper-cased
    /// (the `vs_currency` the request used), not a future, active.
    public static func markets(_ body: [UInt8], vsCurrency: String = "usd") -> Result<[Market], FeedPayloadError> {
        entries(body).map { CoinList.markets($0, quote: vsCurrency) }
    }

    /// Upper-cased symbol → CoinGecko coin id (`id`: `bitcoin`), the best ranked coin of each
    /// symbol, for `CoinGeckoMarketChart`.
    public static func coinIDs(_ body: [UInt8]) -> Result<[String: String], FeedPayloadError> {
        entries(body).map { CoinList.ids($0, idKey: "id") }
    }

    private static func entries(_ body: [UInt8]) -> Result<[FeedJSON], FeedPayloadError> {
        FeedJSON.parse(body, context: "CoinGecko coins/markets").flatMap { json in
            if let entries = json.array { return .success(entries) }
            let message = json["status"]?["error_message"]?.string ?? json["error"]?.string
            if let message { return .failure(FeedPayloadError("CoinGecko coins/markets: error: \(message)")) }
            return .failure(FeedPayloadError("CoinGecko coins/markets: expected an array, found \(json.typeName)"))
        }
    }
}
