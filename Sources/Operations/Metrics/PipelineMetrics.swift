import AlertModel
import CoreMetrics

/// The pipeline's counters and gauges (see `MetricsCatalog`), made once so the hot path only
/// increments. Through swift-metrics: with no backend bootstrapped they do nothing.
public struct PipelineMetrics: Sendable {
    public let factory: any MetricsFactory
    public let dropped: [DropReason: Counter]
    public let outboxDepth: Gauge

    /// `rules`: the rule ids, whose alert counters start at 0 (a series that appears only with
    /// its first alert makes `rate()` and absence alerts awkward) — up to `presetLimit` rules;
    /// beyond that a series per rule would cost more than it tells, so series start with the
    /// rule's first alert.
    public init(rules: [String], factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        var dropped: [DropReason: Counter] = [:]
        for reason in DropReason.allCases {
            dropped[reason] = Counter(
                label: MetricsCatalog.dropped, dimensions: [("reason", reason.rawValue)], factory: factory)
        }
        self.dropped = dropped
        outboxDepth = Gauge(label: MetricsCatalog.outboxDepth, factory: factory)
        outboxDepth.record(0)
        // Listed from the start at 0, like the per-rule alert counters.
        _ = Counter(label: MetricsCatalog.eventsSilenced, factory: factory)
        _ = Counter(label: MetricsCatalog.eventsHeldTotal, factory: factory)
        for gauge in [MetricsCatalog.eventsHeld, MetricsCatalog.digestsOpen, MetricsCatalog.digestEvents] {
            Gauge(label: gauge, factory: factory).record(0)
        }
        if rules.count <= Self.presetLimit {
            for rule in rules { _ = alertCounter(rule) }
        }
    }

    public static let presetLimit = 1_000

    /// This instance's role for `source` when several share a store: leader under `epoch`, or
    /// standby (nil; the epoch gauge keeps the last epoch this instance led under).
    public func role(source: String, epoch: Int64?) {
        let label = [("source", source)]
        Gauge(label: MetricsCatalog.sourceLeader, dimensions: label, factory: factory).record(epoch == nil ? 0 : 1)
        if let epoch { Gauge(label: MetricsCatalog.sourceEpoch, dimensions: label, factory: factory).record(epoch) }
    }

    public func alerted(rule: String) {
        alertCounter(rule).increment()
    }

    private func alertCounter(_ rule: String) -> Counter {
        Counter(label: MetricsCatalog.alerts, dimensions: [("rule", rule)], factory: factory)
    }
}

/// One feed's counters and gauges, labelled `source` with the feed's name (the `--source` name,
/// or a rule-file source's): each feed's connection, staleness and ticks are seen on their own.
public struct FeedMetrics: Sendable {
    public let ticks: Counter
    public let reconnects: Counter
    public let connected: Gauge
    public let stale: Gauge
    public let secondsSinceLastTick: Gauge
    /// Symbols the rules name that the feed's market list lacks (Docs/sources.md#symbols-no-market-list-has).
    public let unlistedSymbols: Gauge

    public init(source: String, factory: any MetricsFactory) {
        let label = [("source", source)]
        ticks = Counter(label: MetricsCatalog.ticks, dimensions: label, factory: factory)
        reconnects = Counter(label: MetricsCatalog.reconnects, dimensions: label, factory: factory)
        connected = Gauge(label: MetricsCatalog.feedConnected, dimensions: label, factory: factory)
        stale = Gauge(label: MetricsCatalog.feedStale, dimensions: label, factory: factory)
        secondsSinceLastTick = Gauge(label: MetricsCatalog.secondsSinceLastTick, dimensions: label, factory: factory)
        unlistedSymbols = Gauge(label: MetricsCatalog.unlistedSymbols, dimensions: label, factory: factory)
        for gauge in [connected, stale, unlistedSymbols] { gauge.record(0) }
    }
}
