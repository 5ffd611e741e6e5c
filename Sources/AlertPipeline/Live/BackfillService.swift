import AlertFeeds
import AlertModel
import AlertStore
import Logging

/// `run`'s backfill (Docs/candles.md), one per feed, run by its `FeedService` beside the feed:
/// the evaluator asks for the history its rules need (`Request`), and this fetches it one symbol after the other
/// and hands each symbol's candles to the evaluator's inbox as soon as they arrive, behind the
/// feed events before them. The evaluator never waits for a candle request: ticks of every
/// symbol are evaluated meanwhile (a window not covered yet is unknown, rules-v2 §4, and
/// seeded history after live ticks keeps them in place), so a slow or hanging candle
/// endpoint delays only the windows of the symbols it has not answered for yet.
///
/// Graceful shutdown (SIGTERM, SIGINT, `--duration`) cancels it first, before its feed: a
/// request in flight ends at once ("request cancelled", not logged as a failure), and what it
/// was fetching is not recorded, so the next start fetches it again. Every symbol handed over
/// before is seeded, saved and recorded in the ledger like the rest of the state.
final class BackfillService: Sendable {
    /// The history to fill: needs that neither the ledger nor this run covers yet.
    struct Request: Sendable {
        var todo: [Backfill.Need]
        /// When it was asked for (the ledger's `fetched_at`).
        var now: Int64
    }

    let supply: any CandleSupply
    let logger: Logger
    let requests: AsyncStream<Request>
    let inbox: Inbox<EvaluatorInput>
    /// The inbox lane of its feed.
    let lane: Int

    init(
        supply: any CandleSupply, logger: Logger, requests: AsyncStream<Request>, inbox: Inbox<EvaluatorInput>,
        lane: Int
    ) {
        self.supply = supply
        self.logger = logger
        self.requests = requests
        self.inbox = inbox
        self.lane = lane
    }

    /// Fills each request in turn until its task is cancelled or the requests end.
    func fill() async {
        for await request in requests {
            guard await Self.fill(request, from: supply, logger: logger, inbox: inbox, lane: lane) else { return }
        }
    }

    /// Fills one request, symbol by symbol (`HistoryBackfill.fetch`); false when cancelled on
    /// the way.
    private static func fill(
        _ request: Request, from supply: any CandleSupply, logger: Logger,
        inbox: Inbox<EvaluatorInput>, lane: Int
    ) async -> Bool {
        let (_, complete) = await HistoryBackfill.fetch(
            request.todo, from: supply, now: request.now,
            say: { say($0, to: logger) },
            take: { need, candles, entry in
                await inbox.send(.filled(need, candles: candles, entry: entry), lane: lane)
            }
        )
        guard complete else { return false }
        // A fill from candles ends with a save (`.fillFinished`); one from a source without
        // candle history does not.
        if supply.hasCandles { await inbox.send(.fillFinished, lane: lane) }
        return true
    }

    static func say(_ line: HistoryBackfill.Line, to logger: Logger) {
        switch line {
        case .info(let text): logger.info("\(text)")
        case .notice(let text): logger.notice("\(text)")
        case .warning(let text): logger.warning("\(text)")
        }
    }
}

/// A rule-file source's candles (rules v3 §1): its engine keys are `NAME:SYMBOL`, and the
/// exchange knows the symbol alone. Named after the source, so the ledger keeps its fills apart.
struct KeyedCandles: CandleSupply {
    let name: String
    let prefix: String
    let inner: any CandleSupply

    var hasCandles: Bool { inner.hasCandles }

    func fetch(_ need: Backfill.Need) async -> Backfill.Outcome {
        var need = need
        if need.symbol.hasPrefix(prefix) { need.symbol.removeFirst(prefix.count) }
        return await inner.fetch(need)
    }
}
