/// Every metric `/metrics` serves: name, type, labels and help text, in one place, so the
/// HELP lines, the docs (Docs/observability.md) and the code agree.
public enum MetricsCatalog {
    public struct Entry: Sendable {
        public var name: String
        public var type: String
        public var labels: [String]
        public var help: String
    }

    public static let ticks = "pricealert_ticks_total"
    public static let dropped = "pricealert_dropped_total"
    public static let alerts = "pricealert_alerts_total"
    /// Counted by the delivery code as `DeliveryMetric.name` (AlertSinks), which this module does
    /// not import; a test in AlertPipelineTests keeps the two the same.
    public static let deliveries = "pricealert_deliveries_total"
    public static let outboxDepth = "pricealert_outbox_depth"
    public static let feedConnected = "pricealert_feed_connected"
    public static let feedStale = "pricealert_feed_stale"
    public static let secondsSinceLastTick = "pricealert_seconds_since_last_tick"
    public static let reconnects = "pricealert_feed_reconnects_total"
    public static let unlistedSymbols = "pricealert_feed_unlisted_symbols"
    public static let sourceLeader = "pricealert_source_leader"
    public static let sourceEpoch = "pricealert_source_epoch"
    public static let eventsSilenced = PolicyMetrics.silencedName
    public static let eventsHeldTotal = PolicyMetrics.heldTotalName
    public static let eventsHeld = PolicyMetrics.heldName
    public static let digestsOpen = PolicyMetrics.openDigestsName
    public static let digestEvents = PolicyMetrics.inDigestsName
    public static let feedAlertsDamped = PolicyMetrics.feedAlertsDampedName

    public static let all: [Entry] = [
        Entry(name: ticks, type: "counter", labels: ["source"], help: "Ticks accepted by the engine."),
        Entry(
            name: dropped, type: "counter", labels: ["reason"],
            help:
                "Ticks and frames dropped: malformed (a frame not understood), invalid-price, empty-symbol, out-of-order, ahead-of-clock."
        ),
        Entry(
            name: alerts, type: "counter", labels: ["rule"],
            help: "Alerts made, by rule id (@feed-stale and @feed-recovered for the feed's own alerts)."),
        Entry(
            name: deliveries, type: "counter", labels: ["sink", "outcome"],
            help: "Delivery attempts by sink name and outcome: delivered, retried, dead, failed."),
        Entry(name: outboxDepth, type: "gauge", labels: [], help: "Deliveries waiting in the durable outbox."),
        Entry(name: feedConnected, type: "gauge", labels: ["source"], help: "1 while the feed is connected, else 0."),
        Entry(
            name: feedStale, type: "gauge", labels: ["source"],
            help: "1 while the feed is declared stale (no prices for --stale-after), else 0."),
        Entry(
            name: secondsSinceLastTick, type: "gauge", labels: ["source"],
            help: "Seconds since the last prices arrived (since start while none have)."),
        Entry(
            name: reconnects, type: "counter", labels: ["source"],
            help: "Feed connections that ended or failed, each followed by a reconnect."),
        Entry(
            name: unlistedSymbols, type: "gauge", labels: ["source"],
            help: "Symbols the rules name that the feed's market list lacks: never subscribed, never priced."),
        Entry(
            name: sourceLeader, type: "gauge", labels: ["source"],
            help:
                "With several instances on one store: 1 while this instance leads the source (enters its events, saves its state), 0 while it is a standby."
        ),
        Entry(
            name: sourceEpoch, type: "gauge", labels: ["source"],
            help: "With several instances on one store: the fencing epoch this instance last led the source under."),
        Entry(
            name: eventsSilenced, type: "counter", labels: [],
            help: "Events a silence kept from every sink (pricealert silence add)."),
        Entry(
            name: eventsHeldTotal, type: "counter", labels: [],
            help: "Events quiet hours held for a sink (one per sink), delivered as one digest when the window ends."),
        Entry(
            name: eventsHeld, type: "gauge", labels: [],
            help: "Events quiet hours hold now, over all sinks (listed by pricealert outbox list)."),
        Entry(
            name: digestsOpen, type: "gauge", labels: [],
            help: "Digests open now, collecting a group's events until their window ends or they are full."),
        Entry(
            name: digestEvents, type: "gauge", labels: [],
            help: "Events waiting in open digests now (listed by pricealert outbox list)."),
        Entry(
            name: feedAlertsDamped, type: "counter", labels: [],
            help: "@feed-stale and @feed-recovered alerts of a flapping feed that flap damping kept from the sinks.")
    ]

    static let help: [String: String] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.help) })
}
