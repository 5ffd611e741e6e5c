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

    /// Fills one request, symbol by symbol; false when cancelled on the way.
    private static func fill(_ request: Request, from supply: any CandleSupply, logger: Logger,
                             inbox: Inbox<EvaluatorInput>) async -> Bool {
        let name = supply.name
        guard supply.hasCandles else {
            let (line, entries) = HistoryBackfill.withoutCandles(request.todo, source: name, now: request.now)
            say(line, to: logger)
            for (need, entry) in zip(request.todo, entries) { await inbox.send(.filled(need, candles: [], entry: entry)) }
            return true
        }
        var entries: [BackfillLedger.Entry] = []
        for need in request.todo {
            let fetched = await supply.fetch(need)
            if Task.isCancelled { return false }
            let (entry, line) = HistoryBackfill.outcome(fetched, of: need, source: name, now: request.now)
            if let line { say(line, to: logger) }
            var candles: [Candle] = []
            if case .candles(let found) = fetched { candles = found }
            await inbox.send(.filled(need, candles: candles, entry: entry))
            if let entry { entries.append(entry) }
        }
        say(HistoryBackfill.summary(request.todo, entries: entries, source: name), to: logger)
        await inbox.send(.fillFinished)
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
