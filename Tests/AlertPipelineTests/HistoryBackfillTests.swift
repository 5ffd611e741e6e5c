import AlertFeeds
import AlertModel
import AlertPipeline
import AlertStore
import Testing

/// The one backfill loop of `check` and `run` (`HistoryBackfill.fetch`): what each symbol's
/// fetch hands over, what the ledger gets, what is said, and where cancellation stops it.
/// The supply is the seam the program's HTTP candles sit behind (`CandleSupply`); the HTTP
/// path itself is tested end to end (BackfillCommandTests).
@Suite struct HistoryBackfillTests {
    /// Answers from a table; cancels the task that asks for `cancelAt`.
    struct TableSupply: CandleSupply {
        var name = "table"
        var hasCandles = true
        var answers: [String: Backfill.Outcome] = [:]
        var cancelAt: String?

        func fetch(_ need: Backfill.Need) async -> Backfill.Outcome {
            if need.symbol == cancelAt { withUnsafeCurrentTask { $0?.cancel() } }
            return answers[need.symbol] ?? .none
        }
    }

    static let candle = Candle(start: 0, end: 60_000, open: 1, high: 2, low: 0.5, close: 1.5)
    static let todo = ["BTC", "ETH", "SOL"].map { Backfill.Need(symbol: $0, reach: 3_600_000, until: 1_000_000) }

    /// What `take` was handed: symbol, number of candles, the entry's candle count (nil: no entry).
    struct Handed: Equatable {
        var symbol: String
        var candles: Int
        var entry: Int?
    }

    static func run(
        _ supply: TableSupply
    ) async -> (handed: [Handed], lines: [String], entries: [BackfillLedger.Entry], complete: Bool) {
        var handed: [Handed] = []
        var lines: [String] = []
        let (entries, complete) = await HistoryBackfill.fetch(
            todo, from: supply, now: 5,
            say: { line in
                switch line {
                case .info(let text): lines.append("info: " + text)
                case .notice(let text): lines.append("notice: " + text)
                case .warning(let text): lines.append("warning: " + text)
                }
            },
            take: { need, candles, entry in
                handed.append(Handed(symbol: need.symbol, candles: candles.count, entry: entry?.candles))
            }
        )
        return (handed, lines, entries, complete)
    }

    @Test func eachSymbolIsHandedOverInOrderAndOnlyAFailedFetchIsAskedAgain() async {
        let supply = TableSupply(answers: [
            "BTC": .candles([Self.candle, Self.candle]), "SOL": .failed("https://x.test/candles: timed out")
        ])
        let result = await Self.run(supply)
        #expect(
            result.handed == [
                Handed(symbol: "BTC", candles: 2, entry: 2), Handed(symbol: "ETH", candles: 0, entry: 0),
                Handed(symbol: "SOL", candles: 0, entry: nil)
            ])
        #expect(result.entries.map(\.symbol) == ["BTC", "ETH"])
        #expect(result.entries.allSatisfy { $0.source == "table" && $0.fetchedAt == 5 && $0.reach == 3_600_000 })
        #expect(result.complete)
        #expect(result.lines.count == 3)
        #expect(result.lines[0].hasPrefix("notice: table: no candles for ETH"))
        #expect(
            result.lines[1].hasPrefix("warning: table: candles for SOL not fetched: https://x.test/candles: timed out"))
        #expect(result.lines[2].hasPrefix("info: table: history of 1 of 3 symbols filled from 2 candles"))
    }

    @Test func aSourceWithoutCandlesHandsOverAnEmptyEntryPerSymbolAndAsksNothing() async {
        var supply = TableSupply(hasCandles: false, answers: ["BTC": .candles([Self.candle])])
        supply.cancelAt = "BTC" // asking would cancel: it must not be asked
        let result = await Self.run(supply)
        #expect(result.handed == Self.todo.map { Handed(symbol: $0.symbol, candles: 0, entry: 0) })
        #expect(result.entries.count == 3)
        #expect(result.complete)
        #expect(result.lines.count == 1)
        #expect(result.lines.first?.hasPrefix("notice: table has no candles") == true)
    }

    @Test func cancellationDuringAFetchHandsThatSymbolNotOverAndSaysNoSummary() async {
        let supply = TableSupply(
            answers: ["BTC": .candles([Self.candle]), "ETH": .candles([Self.candle])], cancelAt: "ETH")
        let result = await Task { await Self.run(supply) }.value
        #expect(result.handed == [Handed(symbol: "BTC", candles: 1, entry: 1)])
        #expect(result.entries.map(\.symbol) == ["BTC"])
        #expect(!result.complete)
        #expect(result.lines.isEmpty)
    }
}
