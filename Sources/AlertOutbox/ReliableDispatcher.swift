import AlertModel
import AlertPolicy
import AlertSinks
import Logging
import Platform
import Synchronization

/// The delivery stage with an outbox: evaluate → outbox → fan out to sinks.
///
/// For sinks that must not lose alerts (`durable`: webhook, exec), `dispatch` hands the
/// delivery (an event or a digest) to the outbox's group commit and returns without waiting for
/// the disk; once the rows are committed (durable), per-sink workers deliver them — at the
/// sink's rate, batching a backlog into digests, retrying by `RetryPolicy`, handing dead letters
/// to the sink's fallback (`SinkWorker`) — so neither a slow fsync nor a slow or dead sink
/// delays evaluation or other sinks. Other sinks (stdout, file) are delivered directly, as
/// `Dispatcher` does. Retrying is this stage's job: sinks only
/// say whether an attempt is worth repeating.
///
/// An alert the outbox cannot take (disk full, table missing) is never sent before it is
/// written: it is held in memory, written again with every later commit and at least every
/// second, and delivered once written. Until then `commit()` throws `UnwrittenAlerts`, so a
/// caller does not record state that says the alert was made.
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
        /// Each sink's `rate` (its own, else its preset's: `PresetRates.effectiveRate`), by name.
        public var rates: [String: RateSpec]
        /// The most events a backlog batch carries, by sink name (`group.max`; default 100).
        public var batchMax: [String: Int]
        /// Each sink's `fallback`, by name.
        public var fallbacks: [String: String]

        public init(
            concurrency: Int = 8, retry: RetryPolicy = RetryPolicy(), pollInterval: Int64 = 1_000,
            sinks: [String: DeliverySettings] = [:], rates: [String: RateSpec] = [:],
            batchMax: [String: Int] = [:], fallbacks: [String: String] = [:]
        ) {
            self.concurrency = concurrency
            self.retry = retry
            self.pollInterval = pollInterval
            self.sinks = sinks
            self.rates = rates
            self.batchMax = batchMax
            self.fallbacks = fallbacks
        }

        /// These defaults with each definition's own `concurrency`, `retry`, `rate` (or its
        /// preset's), `group.max` and `fallback`.
        public init(definitions: some Sequence<SinkDefinition>) {
            self.init()
            for definition in definitions {
                sinks[definition.name] = definition.delivery
                rates[definition.name] = PresetRates.effectiveRate(of: definition)
                batchMax[definition.name] = definition.policy.group?.max
                fallbacks[definition.name] = definition.policy.fallback
            }
        }

        /// Concurrency and retry policy for one sink.
        func settings(for sink: String) -> (concurrency: Int, retry: RetryPolicy) {
            let own = sinks[sink] ?? DeliverySettings()
            return (own.concurrency ?? concurrency, retry.applying(own))
        }
    }

    public nonisolated let durable: Set<String>
    private let outbox: any DeliveryOutbox
    private let direct: Dispatcher
    private let workers: [String: SinkWorker]
    /// Alerts whose outbox write failed and is being tried again.
    private nonisolated let unwritten = Mutex(Unwritten())
    private let clock: @Sendable () -> Int64
    /// The workers' monotonic timeline (`intervals`).
    private let elapsed: ElapsedMillis
    private let logger: Logger
    private var started = false

    /// `durable`: names of the sinks delivered through the outbox. Call `start()` to deliver.
    /// A durable sink's dead letters go to its `fallback` (`configuration.fallbacks`): through
    /// the outbox when that sink is durable too, else sent to it directly.
    ///
    /// `clock` is the time of day (epoch ms) the outbox's rows are stamped with; `intervals` is
    /// the monotonic clock that rates, backoff, `maxAge` and due times run on (`SinkWorker`).
    public init(
        sinks: [String: any Sink], durable: Set<String>, outbox: any DeliveryOutbox,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "pricealert.delivery"),
        clock: @escaping @Sendable () -> Int64 = Wallclock.millis,
        intervals: any Clock<Duration> = ContinuousClock()
    ) {
        self.durable = durable
        self.outbox = outbox
        self.clock = clock
        self.logger = logger
        let direct = Dispatcher(sinks: sinks.filter { !durable.contains($0.key) }, logger: logger)
        self.direct = direct
        let elapsed = ElapsedMillis(intervals)
        self.elapsed = elapsed
        let handoff = Handoff(outbox: outbox, direct: direct, clock: clock, logger: logger)
        var workers: [String: SinkWorker] = [:]
        for name in durable {
            guard let sink = sinks[name] else { continue }
            let settings = configuration.settings(for: name)
            let fallback = configuration.fallbacks[name].map {
                SinkWorker.Fallback(sink: $0, durable: durable.contains($0))
            }
            workers[name] = SinkWorker(
                sink: sink, outbox: outbox, concurrency: settings.concurrency,
                policy: settings.retry, rate: configuration.rates[name],
                batchMax: configuration.batchMax[name] ?? GroupSpec.defaultMax,
                fallback: fallback, handOn: handoff.handOn,
                pollInterval: configuration.pollInterval, clock: clock, elapsed: elapsed,
                logger: logger)
        }
        handoff.workers.withLock { $0 = workers }
        self.workers = workers
    }

    /// Starts the workers; they deliver what earlier runs left pending first (oldest first).
    /// Throws when the outbox cannot be read (a damaged file, a missing table): what earlier runs
    /// left must not be passed over as if there were nothing.
    /// `loadingPending` false (a standby of several instances sharing a store, which sends
    /// nothing): the workers start with no rows; `adopt` hands them rows later.
    public func start(loadingPending: Bool = true) async throws {
        guard !started else { return }
        let pending = loadingPending ? try await outbox.loadPending() : []
        started = true
        let bySink = Dictionary(grouping: pending, by: \.sink)
        for name in Set(bySink.keys).subtracting(workers.keys).sorted() {
            logger.warning(
                "\(bySink[name]?.count ?? 0) alerts wait in the outbox for sink '\(name)', which no rule in use defines; they stay there",
                metadata: ["sink": "\(name)"])
        }
        for (name, worker) in workers {
            worker.add(bySink[name] ?? [])
            worker.start()
        }
    }

    /// Rows committed to the outbox by another process (a leader that was lost), delivered
    /// from now on like this process's own; rows a worker holds already are ignored.
    public func adopt(_ rows: [OutboxEntry]) {
        for (name, rows) in Dictionary(grouping: rows, by: \.sink) { workers[name]?.add(rows) }
    }

    /// Durable sinks: the alert is queued for the outbox's next group commit when this returns,
    /// and delivered once that commit is durable (`commit()` waits for it). If the outbox cannot
    /// take it, it is held and written again (see the type's comment), never sent unwritten.
    /// Returns the results of the sinks delivered directly, in `alert.notify` order; outbox
    /// deliveries are counted in `counts()`. The same as `dispatch(.event(alert), to: alert.notify)`.
    @discardableResult
    public func dispatch(_ alert: Alert) async -> [(sink: String, result: SinkResult)] {
        await dispatch(.event(alert), to: alert.notify, urgent: false)
    }

    /// Hands `delivery` (an event or a digest) to each sink in `sinks`: durable sinks through
    /// the outbox as `dispatch(_ alert:)` says, the others directly, whose results it returns
    /// in `sinks` order. `urgent` (a high-priority event) leaves before what waits for the sink.
    @discardableResult
    public func dispatch(
        _ delivery: Delivery, to sinks: [String], urgent: Bool = false
    ) async
        -> [(sink: String, result: SinkResult)]
    {
        let queued = sinks.filter { durable.contains($0) }
        let direct = sinks.filter { !durable.contains($0) }
        if !queued.isEmpty { enqueue(delivery, sinks: queued, urgent: urgent) }
        if direct.isEmpty { return [] }
        return await self.direct.dispatch(delivery, to: direct, urgent: urgent)
    }

    /// `dispatch(_ alert:)` for each of `alerts`, in order: the outbox takes what durable sinks
    /// get, and each sink delivered directly is handed the events meant for it at once
    /// (`Dispatcher.dispatch(_ alerts:skipping:)`). Returns how many direct deliveries failed.
    public func dispatch(_ alerts: [Alert]) async -> Int {
        for alert in alerts {
            let queued = alert.notify.filter { durable.contains($0) }
            if !queued.isEmpty { enqueue(.event(alert), sinks: queued, urgent: false) }
        }
        return await direct.dispatch(alerts, skipping: durable)
    }

    private func enqueue(_ delivery: Delivery, sinks queued: [String], urgent: Bool) {
        let (workers, logger, outbox) = (self.workers, self.logger, self.outbox)
        let token = unwritten.withLock { $0.newToken() }
        outbox.enqueue(delivery, sinks: queued, urgent: urgent, now: clock()) { result in
            switch result {
            case .success(let rows):
                if self.unwritten.withLock({ $0.written(token) }) {
                    logger.notice("the outbox takes alerts again: every alert held in memory is written")
                }
                for row in rows { workers[row.sink]?.add([row]) }
            case .failure(let error):
                let metadata: Logger.Metadata = ["alert": "\(delivery.id)"]
                let reason = outbox.reason(error)
                if self.unwritten.withLock({ $0.failed(token, delivery.id, reason: reason) }) {
                    logger.critical(
                        "cannot write \(delivery.id) to the outbox: \(reason); held in memory (with later alerts that fail too), written again every second, not sent before it is written",
                        metadata: metadata)
                } else {
                    logger.debug("cannot write \(delivery.id) to the outbox either: \(reason)", metadata: metadata)
                }
            }
        }
    }

    /// Returns when every alert dispatched so far is durable in the outbox; throws when some
    /// could not be written (they are still held and written again while the process runs).
    public func commit() async throws(UnwrittenAlerts) {
        await outbox.commit()
        if let missing = unwrittenAlerts() { throw missing }
    }

    /// The alerts dispatched whose outbox write has failed so far and not yet succeeded; nil
    /// when there are none.
    public nonisolated func unwrittenAlerts() -> UnwrittenAlerts? {
        unwritten.withLock { state in
            state.alerts.isEmpty ? nil : UnwrittenAlerts(ids: state.alerts.map(\.id), reason: state.reason)
        }
    }

    /// Shutdown: commits what was dispatched, then keeps delivering — retries too, after their
    /// backoff — until every row is delivered or a dead letter, or `timeout` has passed (or
    /// every row left waits for a retry later than that), stops the workers and commits their
    /// outcomes. What is not delivered stays in the outbox for the next start. True when nothing
    /// is left.
    @discardableResult
    public func drain(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let until = elapsed() + timeout.milliseconds
        await outbox.commit()
        let workers = Array(self.workers.values)
        // Its own task: shutdown usually runs in a cancelled task, where sleeping returns at once.
        await Task {
            while !workers.allSatisfy({ $0.isSettled(before: until) }), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }.value
        for worker in workers { worker.stop() }
        await outbox.commit()
        return workers.allSatisfy { $0.isEmpty }
    }

    /// Per sink: delivered, retried and given-up counts since start (direct sinks' failures
    /// count as `dead`: they are not retried).
    public func counts() async -> [String: DeliveryCounts] {
        var result: [String: DeliveryCounts] = [:]
        for (name, counts) in await direct.counts {
            result[name] = DeliveryCounts(delivered: counts.delivered, retried: 0, dead: counts.failed)
        }
        for (name, worker) in workers { result[name] = worker.counts }
        return result
    }

    /// Rows waiting in the outbox (all sinks), after everything dispatched and recorded so far.
    public func outboxDepth() async -> Int {
        (try? await outbox.countPending()) ?? 0
    }

    /// The failed outbox writes of `dispatch`, each known by a token until it succeeds.
    private struct Unwritten {
        var tokens: UInt64 = 0
        var alerts: [(token: UInt64, id: String)] = []
        var reason = ""

        mutating func newToken() -> UInt64 {
            tokens += 1
            return tokens
        }

        /// Records a failed write; true when it is the first of a spell of failures.
        mutating func failed(_ token: UInt64, _ id: String, reason: String) -> Bool {
            alerts.append((token, id))
            self.reason = reason
            return alerts.count == 1
        }

        /// Records a successful write; true when it ends a spell of failures.
        mutating func written(_ token: UInt64) -> Bool {
            guard let index = alerts.firstIndex(where: { $0.token == token }) else { return false }
            alerts.remove(at: index)
            return alerts.isEmpty
        }
    }
}

/// Where a sink's dead letters go on to its fallback: rows in the outbox to that sink's worker,
/// deliveries for a sink delivered directly (stdout, file) to it at once; what that sink fails
/// to take becomes a dead letter of its own.
private final class Handoff: Sendable {
    let workers = Mutex<[String: SinkWorker]>([:])
    private let outbox: any DeliveryOutbox
    private let direct: Dispatcher
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    init(outbox: any DeliveryOutbox, direct: Dispatcher, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.outbox = outbox
        self.direct = direct
        self.clock = clock
        self.logger = logger
    }

    var handOn: @Sendable ([OutboxEntry]) async -> Void {
        { rows in await self.route(rows) }
    }

    private func route(_ rows: [OutboxEntry]) async {
        let workers = self.workers.withLock { $0 }
        for row in rows {
            if let worker = workers[row.sink] {
                worker.add([row])
                continue
            }
            let result = await direct.dispatch(row.delivery, to: [row.sink], urgent: row.urgent).first?.result
            guard let reason = result?.failureReason else { continue }
            outbox.deadLetter(row.delivery, sink: row.sink, reason: reason, now: clock()) { [logger, outbox] error in
                logger.error(
                    "cannot write the dead letter of \(row.deliveryID) for '\(row.sink)': \(outbox.reason(error))",
                    metadata: ["sink": "\(row.sink)", "alert": "\(row.deliveryID)"])
            }
        }
    }
}

/// Alerts dispatched to durable sinks that the outbox could not take: they are held in memory
/// and written again while the process runs, and nothing is sent before they are written.
public struct UnwrittenAlerts: Error, Sendable, Equatable, CustomStringConvertible {
    /// Their ids, in the order their writes failed.
    public var ids: [String]
    /// Why the last write failed.
    public var reason: String

    public init(ids: [String], reason: String) {
        self.ids = ids
        self.reason = reason
    }

    public var description: String {
        "\(ids.count) alert\(ids.count == 1 ? "" : "s") could not be written to the outbox: \(reason)"
    }
}
