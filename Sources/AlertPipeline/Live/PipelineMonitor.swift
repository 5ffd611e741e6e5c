import AlertFeeds
import AlertModel
import Logging
import Operations
import Synchronization

/// What the live pipeline tells the world outside the process: metrics, the feed's status
/// (for `/healthz` and the watchdog) and systemd notifications. The pipeline calls it from its
/// evaluation loop; nothing here ever calls back into the pipeline, so data flows one way.
public final class PipelineMonitor: Sendable {
    public let status: FeedStatus
    public let metrics: PipelineMetrics
    public let notifier: ServiceNotifier
    private let source: String
    private let ruleCount: Int
    private let logger: Logger
    /// A notification that failed is logged once at warning, then at debug: a broken
    /// `$NOTIFY_SOCKET` must not flood the journal every watchdog period.
    private let notifyFailed = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    public init(
        source: String, rules: [String], staleAfter: Duration, notifier: ServiceNotifier,
        metrics: PipelineMetrics? = nil, logger: Logger
    ) {
        self.source = source
        ruleCount = rules.count
        status = FeedStatus(staleAfter: staleAfter)
        self.metrics = metrics ?? PipelineMetrics(rules: rules)
        self.notifier = notifier
        self.logger = logger
    }

    /// Any feed event but `.ticks` (those come through `prices(accepted:)`, per batch).
    public func feed(_ event: FeedEvent) {
        switch event {
        case .markets(let markets):
            status.marketsLoaded(markets.count)
        case .ticks:
            break
        case .dropped:
            metrics.dropped[.malformed]?.increment()
        case .connected(let url):
            metrics.feedConnected.record(1)
            let text = "following \(source) at \(url): \(ruleCount) rules"
            if status.connected() {
                if notify({ try notifier.ready(status: text) }), notifier.socket != nil {
                    logger.info("systemd notified: ready")
                }
            } else {
                notify { try notifier.status(text) }
            }
        case .disconnected(let reason, let retryIn):
            status.disconnected(reason: reason)
            metrics.feedConnected.record(0)
            metrics.reconnects.increment()
            notify { try notifier.status("\(source): \(reason); retrying in \(retryIn.milliseconds) ms") }
        case .stale(let silence):
            status.stale()
            metrics.feedStale.record(1)
            notify { try notifier.status("\(source) feed stale: no prices for \(silence.milliseconds / 1000) s") }
        case .recovered:
            status.pricesArrived()
            metrics.feedStale.record(0)
            notify { try notifier.status("following \(source): prices again") }
        }
    }

    /// One frame's prices were evaluated: `accepted` of them passed the engine's checks;
    /// `allRefused` when every one was refused as timed ahead of the local clock.
    public func prices(accepted: Int, allRefused: Bool = false) {
        status.pricesArrived()
        status.ticksEvaluated(allRefused: allRefused)
        metrics.ticks.increment(by: Int64(accepted))
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
        metrics.secondsSinceLastTick.record(status.secondsSinceLastPrices())
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

    /// Runs `send`; false (and logged) when it failed.
    @discardableResult
    private func notify(_ send: () throws -> Void) -> Bool {
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
