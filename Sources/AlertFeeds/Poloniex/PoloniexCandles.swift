import AlertHTTP
import AlertModel

/// Poloniex v3 candles, `GET https://api.poloniex.com/markets/{symbol}/candles` with
/// `interval` (`HOUR_1`, …), `startTime`/`endTime` (epoch ms) and `limit` (at most
/// `maxCandles`). The body (Poloniex API docs, Market Data, "Candles") is an array of
/// 14-element arrays `[low, high, open, close, amount, quantity, buyTakerAmount,
/// buyTakerQuantity, tradeCount, ts, weightedAverage, interval, startTime, closeTime]`, prices
/// as strings, times as integers.
///
/// - The candle is `[startTime, closeTime + 1)`: `closeTime` is the interval's last
///   millisecond. Without a usable `closeTime`, `startTime` + the requested interval.
/// - An entry that is not such an array, or has a missing or non-positive price, is skipped.
/// - An object body (`{"code":21001,"message":"…"}`) is an error with its message.
public enum PoloniexCandles {
    public enum Interval: String, Sendable, CaseIterable {
        case minute = "MINUTE_1", fiveMinutes = "MINUTE_5", tenMinutes = "MINUTE_10"
        case fifteenMinutes = "MINUTE_15", thirtyMinutes = "MINUTE_30"
        case hour = "HOUR_1", twoHours = "HOUR_2", fourHours = "HOUR_4", sixHours = "HOUR_6", twelveHours = "HOUR_12"
        case day = "DAY_1", threeDays = "DAY_3", week = "WEEK_1"

        public var millis: Int64 {
            switch self {
            case .minute: 60_000
            case .fiveMinutes: 300_000
            case .tenMinutes: 600_000
            case .fifteenMinutes: 900_000
            case .thirtyMinutes: 1_800_000
            case .hour: 3_600_000
            case .twoHours: 7_200_000
            case .fourHours: 14_400_000
            case .sixHours: 21_600_000
            case .twelveHours: 43_200_000
            case .day: 86_400_000
            case .threeDays: 259_200_000
            case .week: 604_800_000
            }
        }
    }

    /// The most candles one request may ask for (`limit` ≤ 500).
    public static let maxCandles = 500

    public static func request(
        symbol: String, interval: Interval, start: Int64, end: Int64,
        endpoint: String = "https://api.poloniex.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, "/markets/\(Query.escape(symbol))/candles",
                [
                    ("interval", interval.rawValue), ("startTime", String(start)), ("endTime", String(end)),
                    ("limit", String(maxCandles))
                ]))
    }

    public static func parse(_ body: [UInt8], interval: Interval) -> Result<CandlePage, FeedPayloadError> {
        CandlePage.rows(body, context: "Poloniex candles") { row in
            guard let r = row.array, r.count >= 13, let start = r[12].integer,
                let l = r[0].number, let h = r[1].number, let o = r[2].number, let c = r[3].number
            else { return nil }
            let close = r.count > 13 ? r[13].integer : nil
            let end = close.flatMap { $0 >= start ? $0 + 1 : nil } ?? start + interval.millis
            return Candle(start: start, end: end, open: o, high: h, low: l, close: c)
        }
    }
}
