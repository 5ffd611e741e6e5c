import AlertFeeds
import AlertModel
import AlertStore
import Logging
import ServiceLifecycle

/// `run`'s backfill (Docs/candles.md) as a service beside the feed: the evaluator asks for the
/// history its rules need (`Request`), and this service fetches it one symbol after the other
/// and hands each symbol's candles to the evaluator's inbox as soon as they arrive, behind the
/// feed events before them. The evaluator never waits for a candle request: ticks of every
/// symbol are evaluated meanwhile (a window not covered yet is unknown, rules-v2 §4, and
/// seeded history after live ticks keeps them in place), so a slow or hanging candle
/// endpoint delays only the windows of the symbols it has not answered for yet.
///
/// Graceful shutdown (SIGTERM, SIGINT, `--duration`) cancels it first, before the feed: a
/// request in flight ends at once ("request cancelled", not logged as a failure), and what it
/// was fetching is not recorded, so the next start fetches it again. Every symbol handed over
/// before is seeded, saved and recorded in the ledger like the rest of the state.
final class BackfillService: Service {
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

    init(supply: any CandleSupply, logger: Logger, requests: AsyncStream<Request>, inbox: Inbox<EvaluatorInput>) {
        self.supply = supply
        self.logger = logger
        self.requests = requests
        self.inbox = inbox
    }

    func run() async {
        let (supply, logger, requests, inbox) = (self.supply, self.logger, self.requests, self.inbox)
        await cancelWhenGracefulShutdown {
            for await request in requests {
                guard await Self.fill(request, from: supply, logger: logger, inbox: inbox) else { return }
            }
        }
    }

    /// Fills one request, symbol by symbol (`HistoryBackfill.fetch`); false when cancelled on
    /// the way.
    private static func fill(
        _ request: Request, from supply: any CandleSupply, logger: Logger,
        inbox: Inbox<EvaluatorInput>
    ) async -> Bool {
        let (_, complete) = await HistoryBackfill.fetch(
            request.todo, from: supply, now: request.now,
            say: { say($0, to: logger) },
            take: { need, candles, entry in
                await inbox.send(.filled(need, candles: candles, entry: entry))
            }
        )
        guard complete else { return false }
        // A fill from candles ends with a save (`.fillFinished`); one from a source without
        // candle history does not.
        if supply.hasCandles { await inbox.send(.fillFinished) }
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
