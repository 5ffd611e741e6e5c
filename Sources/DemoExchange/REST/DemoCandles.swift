import AlertModel
import Foundation

/// The exchange's `ohlcv` answers: BTSE's candle rows `[time (s), open, high, low, close,
/// volume]`, newest first, at most `maxCandles`, built from the random walk's minutes before
/// its first step (`RandomWalk.history(of:minutes:)`), so every close is a price the feed would
/// have published in that minute and the last minute's close is the feed's first price.
///
/// Minute `m` (epoch minutes) closes at the walk's price for that minute; its candle opens at
/// the previous minute's close. A candle of `resolution` minutes aggregates its minutes (open of
/// the first, close of the last, high and low over all of them). Only candles whose minutes
/// all lie at or before the start minute are served (later minutes are the live feed's), and
/// none further back than `maxDays`.
struct DemoCandles {
    /// The walk that would have produced the prices (a fresh copy: its start prices).
    let walk: RandomWalk
    /// Epoch minute of the walk's first step.
    let startMinute: Int64

    static let maxCandles = 300
    static let maxDays: Int64 = 400

    /// The rows for `[start, end)` (epoch ms) of `symbol` in candles of `resolution` minutes;
    /// empty for a symbol the walk does not price.
    func rows(symbol: String, resolution: Int64, start: Int64, end: Int64, limit: Int = maxCandles) -> [[Double]] {
        let step = max(1, resolution)
        let oldest = startMinute - Self.maxDays * 1440
        var first = max(floorDivMod(start, 60_000).0, oldest)
        first -= floorDivMod(first, step).1
        // The newest candle that ends inside the range and holds no minute after the start minute.
        var last = min(floorDivMod(end - 1, 60_000).0 + 1, startMinute + 1)
        last -= floorDivMod(last, step).1
        guard last - first >= step else { return [] }
        first = max(first, last - step * Int64(max(0, limit)))
        guard last - first >= step else { return [] }
        // One close more than the minutes served: the first candle's open.
        let count = Int(startMinute - first) + 2
        guard let closes = walk.history(of: symbol, minutes: count) else { return [] }
        func close(_ minute: Int64) -> Double { closes[closes.count - 1 - Int(startMinute - minute)] }
        var rows: [[Double]] = []
        var bucket = last - step
        while bucket >= first {
            let open = close(bucket - 1)
            var high = open, low = open
            for minute in bucket..<(bucket + step) {
                high = max(high, close(minute))
                low = min(low, close(minute))
            }
            rows.append([Double(bucket * 60), open, high, low, close(bucket + step - 1), 0])
            bucket -= step
        }
        return rows
    }

    /// `rows` as the JSON body BTSE sends.
    static func json(_ rows: [[Double]]) -> String {
        "[" + rows.map { "[" + $0.map(JSONNumber.format).joined(separator: ",") + "]" }.joined(separator: ",") + "]"
    }
}
