import AlertHTTP
import AlertModel

/// Where the history fill (`run`, `check --source`; Docs/candles.md) gets one symbol's candles,
/// so the evaluator and its services make no request themselves: the program hands them a
/// source's candle history over HTTP (`SourceCandles`), and a test anything that answers.
public protocol CandleSupply: Sendable {
    /// The source's name, for lines and the ledger.
    var name: String { get }
    /// False for a source that keeps no candle history: nothing is asked of it.
    var hasCandles: Bool { get }
    /// One need's candles, or why there are none (`Backfill.fetch`).
    func fetch(_ need: Backfill.Need) async -> Backfill.Outcome
}

/// A price source's candle history, fetched through `http`.
public struct SourceCandles: CandleSupply {
    public let source: any PriceSource
    public let http: any HTTPClient

    public init(source: any PriceSource, http: any HTTPClient) {
        self.source = source
        self.http = http
    }

    public var name: String { source.name }
    public var hasCandles: Bool { source.candleHistory != nil }

    public func fetch(_ need: Backfill.Need) async -> Backfill.Outcome {
        guard let history = source.candleHistory else { return .none }
        return await Backfill(history: history, http: http).fetch(need)
    }
}
