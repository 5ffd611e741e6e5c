import AlertHTTP
import AlertModel

/// A source's past prices (Docs/candles.md): what `run` and `check --source` seed a symbol's
/// history with before its first live tick, and what `markets --changes` compares with.
/// Requests go through the same `HTTPClient.fetch` as the market list (same timeouts, reply
/// cap and `SourceError` naming the URL without its query).
public protocol CandleHistory: Sendable {
    /// The source's candles of `symbol` (a symbol of this source's ticks) that end by `until`,
    /// oldest first: the last one starting at or before `since`, when the source has one, and
    /// every later one. Empty when the source has no candles for the symbol. `now` is the time
    /// of the request: how far back `since` lies from it picks the candle size (and the period
    /// of the aggregators, whose history always reaches back from now).
    func candles(
        of symbol: String, since: Int64, until: Int64, now: Int64, http: any HTTPClient
    ) async throws -> [Candle]
}

extension PriceSource {
    /// The source's candle history, nil for a source without one (Poloniex legacy).
    public var candleHistory: (any CandleHistory)? { self as? any CandleHistory }
}

/// Candle sizes and paging shared by the sources that serve OHLC candles (BTSE, Poloniex).
enum CandlePaging {
    /// The candle size for a history reaching `span` back from now: minutes up to 24 hours
    /// (the minute buckets of those windows), hours beyond (their hour buckets).
    static func step(covering span: Int64) -> Int64 {
        span <= 86_400_000 ? 60_000 : 3_600_000
    }

    /// Fetches `[since, until)` (since aligned down to `step`) in pages of `perPage` candles,
    /// oldest page first: `page(start, end)` fetches and parses one. The pages' candles are
    /// merged (one per start) and `clipped`.
    static func fetch(
        since: Int64, until: Int64, step: Int64, perPage: Int,
        page: (_ start: Int64, _ end: Int64) async throws -> [Candle]
    ) async throws -> [Candle] {
        var start = since - ((since % step) + step) % step
        var byStart: [Int64: Candle] = [:]
        while start < until {
            let end = min(until, start + step * Int64(perPage))
            for candle in try await page(start, end) where byStart[candle.start] == nil {
                byStart[candle.start] = candle
            }
            start = end
        }
        return clipped(byStart.values.sorted { $0.start < $1.start }, since: since, until: until)
    }

    /// `candles` (oldest first) without those that end after `until` (not closed yet: their
    /// close would lie after the first live tick) and without those before the last one that
    /// starts at or before `since` (the one that covers the window's start).
    static func clipped(_ candles: [Candle], since: Int64, until: Int64) -> [Candle] {
        let closed = candles.filter { $0.end <= until }
        guard let first = closed.lastIndex(where: { $0.start <= since }) else { return closed }
        return Array(closed[first...])
    }
}

extension BTSESource: CandleHistory {
    /// The spot market `SYMBOL-USD` (the market whose index the `coinIndex` ticks carry); when
    /// it has no candles, the perpetual future `SYMBOLPFC`.
    public func candles(
        of symbol: String, since: Int64, until: Int64, now: Int64, http: any HTTPClient
    ) async throws -> [Candle] {
        let step = CandlePaging.step(covering: now - since)
        let resolution: BTSECandles.Resolution = step == 60_000 ? .minute : .hour
        for (kind, market) in [(BTSECandles.Kind.spot, "\(symbol)-USD"), (.futures, "\(symbol)PFC")] {
            let candles = try await CandlePaging.fetch(
                since: since, until: until, step: step, perPage: BTSECandles.maxCandles
            ) { start, end in
                // `end` one millisecond short: the page holds the same candles whether the source
                // reads it as inclusive or exclusive.
                let request = BTSECandles.request(
                    kind, symbol: market, resolution: resolution, start: start, end: end - 1, endpoint: endpoint)
                return try await http.fetch(
                    request, decode: { BTSECandles.parse($0, resolution: resolution, kind: kind) }
                ).candles
            }
            if !candles.isEmpty { return candles }
        }
        return []
    }
}

extension PoloniexSource: CandleHistory {
    /// The market of the ticker's symbol (`BTC_USDT`).
    public func candles(
        of symbol: String, since: Int64, until: Int64, now: Int64, http: any HTTPClient
    ) async throws -> [Candle] {
        let step = CandlePaging.step(covering: now - since)
        let interval: PoloniexCandles.Interval = step == 60_000 ? .minute : .hour
        return try await CandlePaging.fetch(since: since, until: until, step: step, perPage: PoloniexCandles.maxCandles)
        { start, end in
            let request = PoloniexCandles.request(
                symbol: symbol, interval: interval, start: start, end: end - 1, endpoint: endpoint)
            return try await http.fetch(request, decode: { PoloniexCandles.parse($0, interval: interval) }).candles
        }
    }
}

extension HTTPClient {
    /// `request`'s 2xx body decoded with `decode`; a bad payload is a `SourceError` naming the URL.
    func fetch<T>(_ request: HTTPRequest, decode: ([UInt8]) -> Result<T, FeedPayloadError>) async throws -> T {
        try await fetch(request.url, headers: request.headers, decode: decode)
    }
}
