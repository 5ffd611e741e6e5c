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
/// For sinks that must not lose alerts (`durable`: webhook, exec), `dispatch` writes the alert
/// to the outbox in one transaction and returns; per-sink workers deliver from there, retrying
/// by `RetryPolicy`, so a slow or dead sink never delays evaluation or other sinks. Other sinks
/// (stdout, file) are delivered directly, as `Dispatcher` does. Retrying is this stage's job:
/// sinks only say whether an attempt is worth repeating.
public actor ReliableDispatcher {
    public struct Configuration: Sendable {
        /// Attempts in flight per sink (one per rule at a time).
        public var concurrency: Int
        public var retry: RetryPolicy
        /// Milliseconds a worker waits at most before looking at the outbox again.
        public var pollInterval: Int64

        public init(concurrency: Int = 4, retry: RetryPolicy = RetryPolicy(), pollInterval: Int64 = 1_000) {
            self.concurrency = concurrency
            self.retry = retry
            self.pollInterval = pollInterval
        }
    }

    public nonisolated let durable: Set<String>
    private let outbox: Outbox
    private let direct: Dispatcher
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
        var workers: [String: SinkWorker] = [:]
        for name in durable {
            guard let sink = sinks[name] else { continue }
            workers[name] = SinkWorker(sink: sink, outbox: outbox, concurrency: configuration.concurrency,
                                       policy: configuration.retry, pollInterval: configuration.pollInterval,
                                       clock: clock, logger: logger)
        }
        self.workers = workers
    }

    /// Starts the workers; they deliver what earlier runs left pending first (oldest first).
    public func start() async {
        guard !started else { return }
        started = true
        if let pending = try? outbox.pending() {
            let orphans = Set(pending.map(\.sink)).subtracting(workers.keys)
            for name in orphans.sorted() {
                logger.warning("\(pending.filter { $0.sink == name }.count) alerts wait in the outbox for sink '\(name)', which no rule in use defines; they stay there",
                               metadata: ["sink": "\(name)"])
            }
        }
        for worker in workers.values { await worker.start() }
    }

    /// Durable sinks: the alert is in the outbox when this returns (or, if the outbox cannot be
    /// written, delivered once directly, with an error logged). Returns the results of the sinks
    /// delivered directly, in `alert.notify` order; outbox deliveries are counted in `counts()`.
    @discardableResult
    public func dispatch(_ alert: Alert) async -> [(sink: String, result: SinkResult)] {
        let queued = alert.notify.filter { durable.contains($0) }
        var directAlert = alert
        directAlert.notify = alert.notify.filter { !durable.contains($0) }
        if !queued.isEmpty {
            do {
                try outbox.enqueue(alert, sinks: queued, now: clock())
                for name in queued { await workers[name]?.kick() }
            } catch {
                logger.critical("cannot write \(alert.id) to the outbox: \(error); delivering it without retries",
                                metadata: ["alert": "\(alert.id)"])
                directAlert.notify = alert.notify
            }
        }
        if directAlert.notify.isEmpty { return [] }
        return await direct.dispatch(directAlert)
    }

    /// Shutdown: waits up to `timeout` for attempts in flight and rows due now, then stops the
    /// workers. What is not delivered stays in the outbox for the next start. True when nothing
    /// was in flight or due at the end.
    @discardableResult
    public func drain(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let workers = Array(self.workers.values)
        // Its own task: shutdown usually runs in a cancelled task, where sleeping returns at once.
        let idle = await Task {
            while true {
                var idle = true
                for worker in workers where !(await worker.isIdle) { idle = false }
                if idle || ContinuousClock.now >= deadline { return idle }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }.value
        for worker in workers { await worker.stop() }
        return idle
    }

    /// Per sink: delivered, retried and given-up counts since start (direct sinks' failures
    /// count as `dead`: they are not retried).
    public func counts() async -> [String: DeliveryCounts] {
        var result: [String: DeliveryCounts] = [:]
        for (name, counts) in await direct.counts {
            result[name] = DeliveryCounts(delivered: counts.delivered, retried: 0, dead: counts.failed)
        }
        for (name, worker) in workers { result[name] = await worker.counts }
        return result
    }

    /// Rows waiting in the outbox (all sinks).
    public func outboxDepth() -> Int {
        (try? outbox.depth()) ?? 0
    }

    /// Epoch milliseconds from the system clock.
    public static func wallclockMillis() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
