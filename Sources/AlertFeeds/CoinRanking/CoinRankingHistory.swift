import AlertHTTP
import AlertModel

/// Coinranking price history, `GET https://api.coinranking.com/v2/coin/{uuid}/history` with
/// `timePeriod` (Coinranking API docs, "Coin price history"):
/// `{"status":"success","data":{"change":"…","history":[{"price":"9515.04","timestamp":1585069200},…]}}`,
/// newest first, `timestamp` in seconds, `price` a string in the reference currency (US
/// dollar unless the request names another), null where Coinranking has no price.
///
/// - `uuid` is Coinranking's coin id (`Qwsogvtv82FCd` for Bitcoin), not the symbol.
/// - Sampled prices, not OHLC: each point becomes a one-millisecond candle (`CandlePage.points`).
/// - A point without a usable price or an integer timestamp is skipped.
/// - `{"status":"fail","type":"…","message":"…"}` is an error with the message.
public enum CoinRankingHistory {
    /// The periods Coinranking accepts, shortest first.
    public enum Period: String, Sendable, CaseIterable {
        case hour = "1h", threeHours = "3h", twelveHours = "12h", day = "24h", week = "7d", month = "30d"
        case threeMonths = "3m", year = "1y", threeYears = "3y", fiveYears = "5y"

        public var millis: Int64 {
            let day: Int64 = 86_400_000
            switch self {
            case .hour: return 3_600_000
            case .threeHours: return 10_800_000
            case .twelveHours: return 43_200_000
            case .day: return day
            case .week: return 7 * day
            case .month: return 30 * day
            case .threeMonths: return 90 * day
            case .year: return 365 * day
            case .threeYears: return 3 * 365 * day
            case .fiveYears: return 5 * 365 * day
            }
        }

        /// The shortest period that reaches `span` milliseconds back; `fiveYears` beyond that.
        public static func covering(_ span: Int64) -> Period {
            allCases.first { $0.millis >= span } ?? .fiveYears
        }
    }

    public static func request(
        uuid: String, period: Period,
        endpoint: String = "https://api.coinranking.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(endpoint, "/v2/coin/\(Query.escape(uuid))/history", [("timePeriod", period.rawValue)]))
    }

    public static func parse(_ body: [UInt8]) -> Result<CandlePage, FeedPayloadError> {
        let context = "Coinranking coin history"
        return FeedJSON.parse(body, context: context).flatMap { json in
            guard json.members != nil else {
                return .failure(FeedPayloadError("\(context): expected an object, found \(json.typeName)"))
            }
            if let error = CoinRankingCoins.statusError(json, context: context) { return .failure(error) }
            guard let history = json["data"]?["history"]?.array else {
                return .failure(FeedPayloadError(#"\#(context): no "data.history" array"#))
            }
            var points: [(time: Int64, price: Double)] = []
            var skipped = 0
            for entry in history {
                guard let seconds = entry["timestamp"]?.integer, let price = usablePrice(entry["price"]?.number) else {
                    skipped += 1
                    continue
                }
                points.append((seconds * 1000, price))
            }
            return .success(CandlePage.points(points, skipped: skipped))
        }
    }
}
