import AlertFeeds
import AlertHTTP
import AlertModel
import Platform

/// One window of `markets --changes 24h,7d`.
public struct ChangeWindow: Equatable, Sendable {
    /// As written (`7d`): the column's name, the JSON key and `--sort change:7d`.
    public var label: String
    public var millis: Int64

    /// The windows of `24h,7d`, in the order given, each once; nil when one is not a duration
    /// longer than 0.
    public static func list(_ text: String) -> [ChangeWindow]? {
        var windows: [ChangeWindow] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let label = String(part)
            guard let millis = DurationText.parse(label), millis > 0 else { return nil }
            if !windows.contains(where: { $0.label == label }) {
                windows.append(ChangeWindow(label: label, millis: millis))
            }
        }
        return windows
    }
}

/// The change columns of `markets --changes` (Docs/cli.md): for each market with a price and
/// each window W, `(price − c) / c × 100` where `c` is the close of the source's last candle
/// that ends at or before now − W. No such candle (the source's history does not reach that
/// far, or the symbol has none): no value, shown as "—".
public enum MarketChanges {
    /// Candle requests in flight at once: a few, so a long list is not one request at a time,
    /// and a source's rate limit is not hit by hundreds at once.
    public static let parallel = 4

    /// Fills `rows[i].changes`; failed requests are summed up in one warning naming the first URL.
    public static func fill(
        _ rows: inout [MarketRow], windows: [ChangeWindow], source: any PriceSource,
        http: any HTTPClient, now: Int64
    ) async {
        guard let history = source.candleHistory else {
            StandardError.write("pricealert: note: \(source.name) has no candles: the change columns are empty")
            return
        }
        let symbols = Array(Set(rows.filter { $0.price != nil }.map { Symbol.normalize($0.market.symbol) })).sorted()
        let jobs = symbols.flatMap { symbol in windows.map { (symbol, $0) } }
        var closes: [String: [String: Double]] = [:]
        var failures: [String] = []
        await withTaskGroup(of: (String, String, Result<Double?, any Error>).self) { group in
            var next = 0
            func add() {
                guard next < jobs.count else { return }
                let (symbol, window) = jobs[next]
                next += 1
                group.addTask {
                    do {
                        return (
                            symbol, window.label,
                            .success(
                                try await close(
                                    of: symbol, at: now - window.millis, history: history, http: http, now: now))
                        )
                    } catch {
                        return (symbol, window.label, .failure(error))
                    }
                }
            }
            for _ in 0..<parallel { add() }
            for await (symbol, label, result) in group {
                switch result {
                case .success(let close): if let close { closes[symbol, default: [:]][label] = close }
                case .failure(let error): failures.append("\(error)")
                }
                add()
            }
        }
        if let first = failures.first {
            StandardError.write(
                "pricealert: warning: \(source.name): \(failures.count) candle request\(failures.count == 1 ? "" : "s") failed (first: \(first)); their columns show —"
            )
        }
        for i in rows.indices {
            guard let price = rows[i].price, let known = closes[Symbol.normalize(rows[i].market.symbol)] else {
                continue
            }
            for (label, close) in known { rows[i].changes[label] = (price - close) / close * 100 }
        }
    }

    /// The close of the last candle of `symbol` that ends at or before `time`; nil when none.
    /// Asks for the two hours before `time` (hour candles beyond a day back, minutes within).
    public static func close(
        of symbol: String, at time: Int64, history: any CandleHistory, http: any HTTPClient, now: Int64
    ) async throws -> Double? {
        try await history.candles(of: symbol, since: time - 7_200_000, until: time, now: now, http: http).last?.close
    }
}
