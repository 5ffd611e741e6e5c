import AlertFeeds
import AlertModel
import Logging
import Operations
import Synchronization

/// What the live pipeline tells the world outside the process: metrics, the feeds' status
/// (for `/healthz` and the watchdog) and systemd notifications. The pipeline calls it from its
/// evaluation loop; nothing here ever calls back into the pipeline, so data flows one way.
/// Each feed reports through its own `FeedMonitor` (its status and `source`-labelled metrics).
public final class PipelineMonitor: Sendable {
    public let status: FeedStatus
    public let metrics: PipelineMetrics
    public let notifier: ServiceNotifier
    private let logger: Logger
    /// What every feed's monitor shares with this one.
    fileprivate final class Shared: Sendable {
        let notifier: ServiceNotifier
        let logger: Logger
        let ruleCount: Int
        /// Counts a frame the feed did not understand (`pricealert_dropped_total{reason="malformed"}`).
        let countMalformed: @Sendable () -> Void
        /// A notification that failed is logged once at warning, then at debug: a broken
        /// `$NOTIFY_SOCKET` must not flood the journal every watchdog period.
        private let notifyFailed = Atomic<Bool>(false)

        init(notifier: ServiceNotifier, logger: Logger, ruleCount: Int, countMalformed: @escaping @Sendable () -> Void)
        {
            self.notifier = notifier
            self.logger = logger
            self.ruleCount = ruleCount
            self.countMalformed = countMalformed
        }

        /// Runs `send`; false (and logged) when it failed.
        @discardableResult
        func notify(_ send: () throws -> Void) -> Bool {
            do {
                try send()
                return true
            } catch {
                if notifyFailed.exchange(true, ordering: .relaxed) {
                    logger.debug("\(error)")
                } else {
                    logger.warning("\(error) (said once)")
                }
                return false
            }
        }
    }

    private let shared: Shared
    private let stopped = Atomic<Bool>(false)
    /// Every feed added, by name (touched only when a feed is added or removed, and per scrape).
    private let feeds = Mutex<[(name: String, monitor: FeedMonitor)]>([])

    /// A monitor without feeds: each is added with `addFeed`.
    public init(rules: [String], notifier: ServiceNotifier, metrics: PipelineMetrics? = nil, logger: Logger) {
        status = FeedStatus()
        let metrics = metrics ?? PipelineMetrics(rules: rules)
        self.metrics = metrics
        self.notifier = notifier
        self.logger = logger
        shared = Shared(
            notifier: notifier, logger: logger, ruleCount: rules.count,
            countMalformed: { metrics.dropped[.malformed]?.increment() })
    }

    /// A monitor with one feed, `source` (see `feed(named:)`).
    public convenience init(
        source: String, rules: [String], staleAfter: Duration, notifier: ServiceNotifier,
        metrics: PipelineMetrics? = nil, logger: Logger
    ) {
        self.init(rules: rules, notifier: notifier, metrics: metrics, logger: logger)
        addFeed(source, staleAfter: staleAfter)
    }

    /// The feed `name`'s monitor, made (and counted in `/healthz` and `/metrics`) the first time.
    @discardableResult
    public func addFeed(_ name: String, staleAfter: Duration) -> FeedMonitor {
        feeds.withLock { feeds in
            if let known = feeds.first(where: { $0.name == name }) { return known.monitor }
            status.addFeed(name, staleAfter: staleAfter)
            let monitor = FeedMonitor(
                name: name, status: status, shared: shared, metrics: FeedMetrics(source: name, factory: metrics.factory)
            )
            feeds.append((name, monitor))
            return monitor
        }
    }

    /// A feed that stopped for good (its source removed from the rule files): `/healthz` no
    /// longer counts it, and its connection gauge reads 0.
    public func removeFeed(_ name: String) {
        let removed = feeds.withLock { feeds in
            defer { feeds.removeAll { $0.name == name } }
            return feeds.first { $0.name == name }?.monitor
        }
        removed?.metrics.connected.record(0)
        status.removeFeed(name)
    }

    /// The monitor of the feed `name`, nil when none was added.
    public func feed(named name: String) -> FeedMonitor? {
        feeds.withLock { $0.first { $0.name == name }?.monitor }
    }

    public func dropped(_ reason: DropReason) {
        metrics.dropped[reason]?.increment()
    }

    public func alerted(rule: String) {
        metrics.alerted(rule: rule)
    }

    /// Gauges that are read rather than counted: called before each scrape.
    public func refresh(outboxDepth: Int) {
        metrics.outboxDepth.record(Int64(outboxDepth))
        for (name, feed) in feeds.withLock({ $0 }) {
            feed.metrics.secondsSinceLastTick.record(status.secondsSinceLastPrices(feed: name))
        }
    }

    /// Shutdown has begun: `STOPPING=1`, `/healthz` says so, the watchdog stops. Once.
    public func shutdownBegan(status text: String) {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        status.stopping()
        notify { try notifier.stopping(status: text) }
    }

    /// Sends `WATCHDOG=1` every half `WATCHDOG_USEC` while the feed is fresh, until cancelled
    /// or shutdown begins. A stale feed gets none, so systemd restarts a wedged daemon after
    /// `WatchdogSec`. Returns at once when systemd set no watchdog.
    public func keepWatchdogFed() async {
        guard let interval = notifier.watchdogInterval else { return }
        while !Task.isCancelled, !stopped.load(ordering: .relaxed) {
            if status.isReady {
                switch status.freshness() {
                case .healthy: notify { try notifier.watchdog() }
                case .unhealthy(let reason): logger.debug("watchdog withheld: \(reason)")
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    @discardableResult
    private func notify(_ send: () throws -> Void) -> Bool { shared.notify(send) }
}

/// One feed's side of the monitor: its events move its status in `/healthz` and its
/// `source`-labelled metrics. Made by `PipelineMonitor.addFeed`; the evaluator keeps one per
/// feed, so the tick path looks nothing up.
public final class FeedMonitor: Sendable {
    public let name: String
    public let metrics: FeedMetrics
    private let status: FeedStatus
    private let shared: PipelineMonitor.Shared

    fileprivate init(name: String, status: FeedStatus, shared: PipelineMonitor.Shared, metrics: FeedMetrics) {
        self.name = name
        self.status = status
        self.shared = shared
        self.metrics = metrics
    }

    /// Any feed event but `.ticks` (those come through `prices(accepted:)`, per batch).
    public func feed(_ event: FeedEvent) {
        let (notifier, pipeline) = (shared.notifier, shared)
        switch event {
        case .markets(let markets):
            status.marketsLoaded(markets.count, feed: name)
        case .ticks:
            break
        case .dropped:
            pipeline.countMalformed()
        case .connected(let url):
            metrics.connected.record(1)
            let text = "following \(name) at \(url): \(pipeline.ruleCount) rules"
            if status.connected(feed: name) {
                if pipeline.notify({ try notifier.ready(status: text) }), notifier.socket != nil {
                    pipeline.logger.info("systemd notified: ready")
                }
            } else {
                pipeline.notify { try notifier.status(text) }
            }
        case .disconnected(let reason, let retryIn):
            status.disconnected(reason: reason, feed: name)
            metrics.connected.record(0)
            metrics.reconnects.increment()
            pipeline.notify { try notifier.status("\(name): \(reason); retrying in \(retryIn.milliseconds) ms") }
        case .stale(let silence):
            status.stale(feed: name)
            metrics.stale.record(1)
            pipeline.notify {
                try notifier.status("\(name) feed stale: no prices for \(silence.milliseconds / 1000) s")
            }
        case .recovered:
            status.pricesArrived(feed: name)
            metrics.stale.record(0)
            pipeline.notify { try notifier.status("following \(name): prices again") }
        }
    }

    /// One frame's prices were evaluated: `accepted` of them passed the engine's checks;
    /// `allRefused` when every one was refused as timed ahead of the local clock.
    public func prices(accepted: Int, allRefused: Bool = false) {
        status.pricesArrived(feed: name)
        status.ticksEvaluated(allRefused: allRefused, feed: name)
        metrics.ticks.increment(by: Int64(accepted))
    }
}
