import AlertHTTP
import AlertModel

/// BTSE candles, spot `GET https://api.btse.com/spot/api/v3.2/ohlcv` and futures
/// `GET https://api.btse.com/futures/api/v2.1/ohlcv`, both with `symbol` (the market:
/// `BTC-USD`, `BTCPFC`), `resolution` (minutes) and `start`/`end` (epoch milliseconds).
/// Both answer with the same shape (BTSE API docs, "Charting Data"): an array of
/// `[time, open, high, low, close, volume]`, newest first, at most `maxCandles` per request.
///
/// - Time: documented as "Unix time" and shown in seconds (`1624987380`); a value of at
///   least 10¹¹ is read as milliseconds instead, so a switch to milliseconds reads the same.
/// - The candle is `[time, time + resolution)`; numbers may be JSON numbers or strings.
/// - An entry that is not an array of at least 5 numbers with usable prices is skipped.
/// - An object body (`{"status":400,"errorCode":…,"message":"…"}`) is an error with its message.
public enum BTSECandles {
    public enum Kind: String, Sendable {
        case spot, futures

        var path: String { self == .spot ? "/spot/api/v3.2/ohlcv" : "/futures/api/v2.1/ohlcv" }
    }

    /// The resolutions both markets support, in minutes.
    public enum Resolution: Int, Sendable, CaseIterable {
        case minute = 1, fiveMinutes = 5, fifteenMinutes = 15, thirtyMinutes = 30
        case hour = 60, sixHours = 360, day = 1440

        public var millis: Int64 { Int64(rawValue) * 60_000 }
    }

    /// Candles per response (BTSE: "Default of 300 data points will be returned").
    public static let maxCandles = 300

    /// The request for `[start, end)` (epoch ms) of one market. `endpoint` is the REST base
    /// (`--endpoint`), `https://api.btse.com` by default.
    public static func request(
        _ kind: Kind, symbol: String, resolution: Resolution, start: Int64, end: Int64,
        endpoint: String = "https://api.btse.com"
    ) -> HTTPRequest {
        HTTPRequest(
            url: Query.url(
                endpoint, kind.path,
                [
                    ("symbol", symbol), ("resolution", String(resolution.rawValue)),
                    ("start", String(start)), ("end", String(end))
                ]))
    }

    public static func parse(
        _ body: [UInt8], resolution: Resolution, kind: Kind = .spot
    ) -> Result<CandlePage, FeedPayloadError> {
        CandlePage.rows(body, context: "BTSE \(kind.rawValue) ohlcv") { row in
            guard let r = row.array, r.count >= 5, let time = r[0].integer,
                let o = r[1].number, let h = r[2].number, let l = r[3].number, let c = r[4].number
            else { return nil }
            let start = time >= 100_000_000_000 ? time : time * 1000
            return Candle(start: start, end: start + resolution.millis, open: o, high: h, low: l, close: c)
        }
    }
}
