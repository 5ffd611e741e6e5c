import AlertModel

/// Coinranking `GET https://api.coinranking.com/v2/coins`:
/// `{"status":"success","data":{"stats":{…},"coins":[{"symbol":"BTC","name":"Bitcoin","price":"65955.43","change":"-0.61",…}]}}`,
/// or the bare `coins` array.
///
/// - Symbol: `symbol` upper-cased; price: `price` (a string, can be null for new listings →
///   skipped); change24h: `change`, already percent (the default `timePeriod` is 24h), null → nil.
/// - Time: coins carry no timestamp, so the receive time.
/// - `{"status":"fail","type":"RATE_LIMIT_EXCEEDED","message":"…"}` is `.invalid` with the message.
/// Prices are in the reference currency, US dollar unless the request names another.
public enum CoinRankingCoins {
    public static let url = "https://api.coinranking.com/v2/coins"

    public static func ticks(_ body: [UInt8], receivedAt: Int64) -> FeedFrame {
        ticksCounting(body, receivedAt: receivedAt).frame
    }

    public static func ticksCounting(_ body: [UInt8], receivedAt: Int64) -> ParsedFrame {
        switch coins(body) {
        case .failure(let error): return ParsedFrame(.invalid(error.reason))
        case .success(let coins): return CoinList.ticks(coins, price: "price", change: "change") { _ in receivedAt }
        }
    }

    /// One market per coin with a symbol: base = the symbol, quote = `quote` (USD by default).
    public static func markets(_ body: [UInt8], quote: String = "USD") -> Result<[Market], FeedPayloadError> {
        coins(body).map { CoinList.markets($0, quote: quote) }
    }

    /// Upper-cased symbol → Coinranking coin id (`uuid`: `Qwsogvtv82FCd`), the best ranked
    /// coin of each symbol, for `CoinRankingHistory`.
    public static func coinIDs(_ body: [UInt8]) -> Result<[String: String], FeedPayloadError> {
        coins(body).map { CoinList.ids($0, idKey: "uuid") }
    }

    private static func coins(_ body: [UInt8]) -> Result<[FeedJSON], FeedPayloadError> {
        FeedJSON.parse(body, context: "Coinranking coins").flatMap { json in
            if let coins = json.array { return .success(coins) }
            guard json.members != nil else {
                return .failure(
                    FeedPayloadError("Coinranking coins: expected an object or an array, found \(json.typeName)"))
            }
            if let error = statusError(json, context: "Coinranking coins") { return .failure(error) }
            guard let coins = json["data"]?["coins"]?.array else {
                return .failure(FeedPayloadError(#"Coinranking coins: no "data.coins" array"#))
            }
            return .success(coins)
        }
    }

    /// The error of an answer whose `status` is not `success`
    /// (`{"status":"fail","type":"RATE_LIMIT_EXCEEDED","message":"…"}`), naming `context`.
    static func statusError(_ json: FeedJSON, context: String) -> FeedPayloadError? {
        guard let status = json["status"]?.string, status != "success" else { return nil }
        let message = json["message"]?.string ?? json["type"]?.string ?? "no message"
        return FeedPayloadError("\(context): status \(status): \(message)")
    }
}
