#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AlertCore
import AlertStore
import Logging

/// The delivery stage with an outbox: evaluate → outbox → fan out to sinks.
///
/// For sinks that must not lose alerts (`durable`: webhook, exec), `dispatch` hands the alert
/// to the outbox's group commit and returns without waiting for the disk; once the rows are
/// committed (durable), per-sink workers deliver them, retrying by `RetryPolicy`, so neither a
/// slow fsync nor a slow or dead sink delays evaluation or other sinks. Other sinks (stdout,
/// file) are delivered directly, as `Dispatcher` does. Retrying is this stage's job: sinks only
/// say whether an attempt is worth repeating.
public actor ReliableDispatcher {
    public struct Configuration: Sendable {
        /// Attempts in flight per sink (one per rule at a time), unless the sink sets its own.
        public var concurrency: Int
        /// Backoff and maximum age, unless the sink sets its own.
        public var retry: RetryPolicy
        /// Milliseconds a worker waits at most before looking at its rows again.
        public var pollInterval: Int64
        /// Sinks' own settings (a rule file's `concurrency` and `retry` keys), by sink name.
        public var sinks: [String: DeliverySettings]

        public init(concurrency: Int = 8, retry: RetryPolicy = RetryPolicy(), pollInterval: Int64 = 1_000,
                    sinks: [String: DeliverySettings] = [:]) {
            self.concurrency = concurrency
            self.retry = retry
            self.pollInterval = pollInterval
            self.sinks = sinks
        }

        /// These defaults with each definition's own `concurrency` and `retry`.
        public init(definitions: some Sequence<SinkDefinition>) {
            self.init(sinks: Dictionary(definitions.map { ($0.name, $0.delivery) }, uniquingKeysWith: { $1 }))
        }

        /// Concurrency and retry policy for one sink.
        func settings(for sink: String) -> (concurrency: Int, retry: RetryPolicy) {
            let own = sinks[sink] ?? DeliverySettings()
            return (own.concurrency ?? concurrency, retry.applying(own))
        }
    }

    public nonisolated let durable: Set<String>
    private let outbox: Outbox
    private let direct: Dispatcher
    /// Durable sinks once, without retries, for an alert the outbox could not take.
    private let fallback: Dispatcher
    private let workers: [String: SinkWorker]
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private var started = false

    /// `durable`: names of the sinks delivered through the outbox. Call `start()` to deliver.
    public init(sinks: [String: any Sink], durable: Set<String>, outbox: Outbox,
                configuration: Configuration = Configuration(),
                logger: Logger = Logger(label: "pricealert.delivery"),
                clock: @escaping @Sendable () -> Int64 = ReliableDispatcher.wallclockMillis) {
        self.durable = durable
        self.outbox = outbox
        self.clock = clock
        self.logger = logger
        self.direct = Dispatcher(sinks: sinks.filter { !durable.contains($0.key) }, logger: logger)
        self.fallback = Dispatcher(sinks: sinks.filter { durable.contains($0.key) }, logger: logger)
        var workers: [String: SinkWorker] = [:]
        for name in durable {
            guard let sink = sinks[name] else { continue }
            let settings = configuration.settings(for: name)
            workers[name] = SinkWorker(sink: sink, outbox: outbox, concurrency: settings.concurrency,
                                       policy: settings.retry, pollInterval: configuration.pollInterval,
                                       clock: clock, logger: logger)
        }
        self.workers = workers
    }

    /// Starts the workers; they deliver what earlier runs left pending first (oldest first).
    public func start() async {
        guard !started else { return }
        started = true
        let pending: [OutboxEntry]
        do {
            pending = try await outbox.loadPending()
        } catch {
            logger.error("cannot read the outbox: \(error); what earlier runs left waits for the next start")
            pending = []
        }
        let bySink = Dictionary(grouping: pending, by: \.sink)
        for name in Set(bySink.keys).subtracting(workers.keys).sorted() {
            logger.warning("\(bySink[name]?.count ?? 0) alerts wait in the outbox for sink '\(name)', which no rule in use defines; they stay there",
                           metadata: ["sink": "\(name)"])
        }
        for (name, worker) in workers {
            worker.add(bySink[name] ?? [])
            worker.start()
        }
    }

    /// Durable sinks: the alert is queued for the outbox's next group commit when this returns,
    /// and delivered once that commit is durable (`commit()` waits for it). If the outbox cannot
    /// take it, it is delivered once directly, without retries, with an error logged. Returns
    /// the results of the sinks delivered directly, in `alert.notify` order; outbox deliveries
    /// are counted in `counts()`.
    @discardableResult
    public func dispatch(_ alert: Alert) async -> [(sink: String, result: SinkResult)] {
        let queued = alert.notify.filter { durable.contains($0) }
        var directAlert = alert
        directAlert.notify = alert.notify.filter { !durable.contains($0) }
        if !queued.isEmpty {
            let (workers, fallback, logger) = (self.workers, self.fallback, self.logger)
            var fallbackAlert = alert
            fallbackAlert.notify = queued
            let once = fallbackAlert
            outbox.enqueue(alert, sinks: queued, now: clock()) { result in
                switch result {
                case .success(let rows):
                    for row in rows { workers[row.sink]?.add([row]) }
                case .failure(let error):
                    logger.critical("cannot write \(alert.id) to the outbox: \(error); delivering it without retries",
                                    metadata: ["alert": "\(alert.id)"])
                    Task { await fallback.dispatch(once) }
                }
            }
        }
        if directAlert.notify.isEmpty { return [] }
        return await direct.dispatch(directAlert)
    }

    /// Returns when every alert dispatched so far is durable in the outbox (or, if the outbox
    /// could not take it, handed to the fallback).
    public func commit() async {
        await outbox.commit()
    }

    /// Shutdown: commits what was dispatched, waits up to `timeout` for attempts in flight and
    /// rows due now, stops the workers and commits their outcomes. What is not delivered stays in
    /// the outbox for the next start. True when nothing was in flight or due at the end.
    @discardableResult
    public func drain(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        await outbox.commit()
        let workers = Array(self.workers.values)
        // Its own task: shutdown usually runs in a cancelled task, where sleeping returns at once.
        let idle = await Task {
            while true {
                let idle = workers.allSatisfy { $0.isIdle }
                if idle || ContinuousClock.now >= deadline { return idle }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }.value
        for worker in workers { worker.stop() }
        await outbox.commit()
        return idle
    }

    /// Per sink: delivered, retried and given-up counts since start (direct sinks' failures
    /// count as `dead`: they are not retried).
    public func counts() async -> [String: DeliveryCounts] {
        var result: [String: DeliveryCounts] = [:]
        for (name, counts) in await direct.counts {
            result[name] = DeliveryCounts(delivered: counts.delivered, retried: 0, dead: counts.failed)
        }
        for (name, worker) in workers { result[name] = worker.counts }
        for (name, counts) in await fallback.counts {
            result[name, default: DeliveryCounts()].delivered += counts.delivered
            result[name, default: DeliveryCounts()].dead += counts.failed
        }
        return result
    }

    /// Rows waiting in the outbox (all sinks), after everything dispatched and recorded so far.
    public func outboxDepth() async -> Int {
        (try? await outbox.countPending()) ?? 0
    }

    /// Epoch milliseconds from the system clock.
    public static func wallclockMillis() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
