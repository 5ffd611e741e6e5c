import AlertEngine
import AlertFeeds
import AlertModel
import AlertRules
import AlertStore

/// What the evaluator reacts to, in order: the feeds' events, reloaded rules and the history
/// the backfill services fetched.
enum EvaluatorInput: Sendable {
    /// An event of the feed `origin`.
    case feed(FeedEvent, from: FeedOrigin)
    /// The feed `origin` stopped for good (its source was removed from the rule files).
    case feedEnded(FeedOrigin)
    case reload(RuleSet)
    /// One symbol's fill (`BackfillService`): its candles to seed (oldest first; none when the
    /// source has none) and its ledger entry (nil: the fetch failed, asked again later).
    case filled(Backfill.Need, candles: [Candle], entry: BackfillLedger.Entry?)
    /// The backfill service finished a request: what it filled is saved and recorded now.
    case fillFinished
    /// This instance's new role for a lease (several instances on one store).
    case role(RoleChange)
    /// Each lease's last committed save: a standby forgets what was evaluated well before it.
    case saveMarks([String: Int64])
    /// Events whose write was dropped because another instance leads their lease.
    case refused(RefusedEvents)
}

/// What flows from the evaluator to delivery, in order.
enum DeliveryInput: Sendable {
    case alert(Alert)
    /// `written`, when given, is called once the save was written or failed to be.
    case save([SymbolSnapshot], markets: MarketsSave?, written: (@Sendable () -> Void)? = nil)
    /// The known markets of `listed` rules (each market list's that changed), saved behind
    /// the alerts before them.
    case listings([NewListings])
    /// A rule-file source's new market list, kept in the state folder (`SourceMarketStore`).
    case sourceMarkets(MarketsSave)
    /// Symbols filled from candles, recorded in the ledger once the save before them is written.
    case backfilled([BackfillLedger.Entry])
    /// Reloaded rules, behind the alerts made under the rules before them: the policy stages
    /// take their priorities for the alerts after.
    case rules(RuleSet)
    /// The wall clock, about once a second (the delivery service's own ticker, not the evaluator).
    case wallClock(Int64)
}

/// Which feed an event comes from, and what the evaluator needs of it: its ticks' `source`,
/// its stale limit (for `@feed-stale`), its monitor and where its history is asked for.
final class FeedOrigin: Sendable {
    /// The feed's name: the `--source` name, or the rule-file source's name. `/healthz`,
    /// `/metrics`, the log, the backfill ledger and the saved market list use it.
    let name: String
    /// What its ticks and events carry as `source` (rules v3 §1): the rule-file source's name,
    /// nil for `--source`.
    let tag: String?
    let staleAfter: Duration
    let monitor: FeedMonitor
    /// Where its history is asked for (nil: no backfill).
    let backfill: AsyncStream<BackfillService.Request>.Continuation?
    /// The market list the state folder kept for it at start (nil: none): a list equal to it
    /// is not saved again.
    let kept: [Market]?
    /// The feed subscribes market by market from its list (`FeedRunner.subscribesBySymbol`).
    let subscribes: Bool

    init(
        name: String, tag: String?, staleAfter: Duration, monitor: FeedMonitor,
        backfill: AsyncStream<BackfillService.Request>.Continuation?, kept: [Market]? = nil, subscribes: Bool = false
    ) {
        self.subscribes = subscribes
        self.name = name
        self.tag = tag
        self.staleAfter = staleAfter
        self.monitor = monitor
        self.backfill = backfill
        self.kept = kept
    }

    /// The engine keys (rules v3 §1) of this feed's ticks start with this: `NAME:` for a
    /// rule-file source; nil for `--source`, whose keys have no `:`.
    var keyPrefix: String? { tag.map { $0 + ":" } }
}
