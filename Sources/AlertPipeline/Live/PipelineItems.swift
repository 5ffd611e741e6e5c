import AlertEngine
import AlertFeeds
import AlertModel
import AlertRules
import AlertStore

/// What the evaluator reacts to, in order: the feed's events, reloaded rules and the history
/// the backfill service fetched.
enum EvaluatorInput: Sendable {
    case feed(FeedEvent)
    case reload(RuleSet)
    /// One symbol's fill (`BackfillService`): its candles to seed (oldest first; none when the
    /// source has none) and its ledger entry (nil: the fetch failed, asked again later).
    case filled(Backfill.Need, candles: [Candle], entry: BackfillLedger.Entry?)
    /// The backfill service finished a request: what it filled is saved and recorded now.
    case fillFinished
}

/// What flows from the evaluator to delivery, in order.
enum DeliveryInput: Sendable {
    case alert(Alert)
    /// `written`, when given, is called once the save was written or failed to be.
    case save([SymbolSnapshot], markets: MarketsSave?, written: (@Sendable () -> Void)? = nil)
    /// The known markets of `listed` rules, saved behind the alerts before them.
    case listings(NewListings)
    /// Symbols filled from candles, recorded in the ledger once the save before them is written.
    case backfilled([BackfillLedger.Entry])
    /// Reloaded rules, behind the alerts made under the rules before them: the policy stages
    /// take their priorities for the alerts after.
    case rules(RuleSet)
    /// The wall clock, about once a second (the delivery service's own ticker, not the evaluator).
    case wallClock(Int64)
}
