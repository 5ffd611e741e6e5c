import AlertModel

/// The candles of one history response, oldest first, one per start time, and how many entries
/// were skipped (not an array of the right length, a missing or non-positive price, a bad time).
public struct CandlePage: Sendable, Equatable {
    public var candles: [Candle]
    public var skipped: Int

    public init(candles: [Candle], skipped: Int = 0) {
        self.candles = candles
        self.skipped = skipped
    }

    /// `candles` sorted by start (sources differ: BTSE and Coinranking send the newest first);
    /// of several with the same start, the first in the body is kept and the others counted as
    /// skipped. Unusable candles (`Candle.isUsable`) are counted as skipped too.
    init(unordered: [Candle], skipped: Int) {
        var seen = Set<Int64>()
        var kept: [Candle] = []
        var dropped = skipped
        for candle in unordered {
            guard candle.isUsable, seen.insert(candle.start).inserted else {
                dropped += 1
                continue
            }
            kept.append(candle)
        }
        self.init(candles: kept.sorted { $0.start < $1.start }, skipped: dropped)
    }

    /// Price points (aggregators send sampled prices, not OHLC) as candles: each point
    /// `(t, p)` becomes the one-millisecond candle `[t, t + 1)` with open = high = low = close
    /// = `p`, so it seeds exactly the price observed at `t` and claims nothing about the time
    /// between two points.
    static func points(_ points: [(time: Int64, price: Double)], skipped: Int) -> CandlePage {
        CandlePage(
            unordered: points.map {
                Candle(
                    start: $0.time, end: $0.time + 1, open: $0.price,
                    high: $0.price, low: $0.price, close: $0.price)
            },
            skipped: skipped)
    }
}

extension CandlePage {
    /// A body that is an array of candle rows (BTSE, Poloniex): each row read by `candle`, nil
    /// for a row to skip. An object with a `message` (or `msg`) is the source's error document.
    static func rows(
        _ body: [UInt8], context: String, candle: (FeedJSON) -> Candle?
    ) -> Result<CandlePage, FeedPayloadError> {
        FeedJSON.parse(body, context: context).flatMap { json in
            guard let rows = json.array else {
                if let message = json["message"]?.string ?? json["msg"]?.string {
                    return .failure(FeedPayloadError("\(context): error: \(message)"))
                }
                return .failure(FeedPayloadError("\(context): expected an array, found \(json.typeName)"))
            }
            let candles = rows.compactMap(candle)
            return .success(CandlePage(unordered: candles, skipped: rows.count - candles.count))
        }
    }
}

/// Query strings for the candle requests. Written by hand: AlertFeeds does not import
/// Foundation, and the values are symbols, numbers and ids.
enum Query {
    /// `path?k1=v1&k2=v2`, each value percent-encoded except RFC 3986's unreserved characters.
    static func url(_ base: String, _ path: String, _ items: [(String, String)]) -> String {
        Endpoint.join(base, path) + "?" + items.map { "\($0.0)=\(escape($0.1))" }.joined(separator: "&")
    }

    /// `value` with every byte outside `A-Z a-z 0-9 - . _ ~` as `%XX`.
    static func escape(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}
