import AlertCore
import AlertStore
import Logging

/// Delivers one sink's outbox rows: up to `concurrency` attempts at once, but never two of the
/// same rule (the outbox only offers a rule's oldest row), so a rule's alerts arrive in order.
/// Each attempt's outcome is written back before the rule's next row can start.
actor SinkWorker {
    let sink: any Sink
    private let outbox: Outbox
    private let concurrency: Int
    private let policy: RetryPolicy
    private let pollInterval: Int64
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    private(set) var counts = DeliveryCounts()
    /// Rules with an attempt in flight.
    private var busyRules: Set<String> = []
    private var sleeper: Task<Void, Never>?
    private var loop: Task<Void, Never>?
    private var stopped = false
    /// Outcomes the outbox could not record (disk full, database closed), by row id. Recorded
    /// again before the row could be sent again, so a delivered alert is never re-sent just
    /// because its row could not be deleted.
    private var unrecorded: [Int64: SinkResult] = [:]

    init(sink: any Sink, outbox: Outbox, concurrency: Int, policy: RetryPolicy, pollInterval: Int64,
         clock: @escaping @Sendable () -> Int64, logger: Logger) {
        self.sink = sink
        self.outbox = outbox
        self.concurrency = max(1, concurrency)
        self.policy = policy
        self.pollInterval = max(1, pollInterval)
        self.clock = clock
        self.logger = logger
    }

    func start() {
        guard loop == nil, !stopped else { return }
        loop = Task { await self.run() }
    }

    /// Something changed (a new row, a finished attempt): look at the outbox now.
    func kick() {
        sleeper?.cancel()
    }

    /// No new attempts from now on; attempts in flight still record their outcome.
    func stop() {
        stopped = true
        sleeper?.cancel()
    }

    /// Nothing in flight and nothing due now.
    var isIdle: Bool {
        guard busyRules.isEmpty else { return false }
        return ((try? outbox.due(now: clock(), limit: 1, sink: sink.name)) ?? []).isEmpty
    }

    private func run() async {
        while !stopped {
            startDueAttempts()
            await sleep(millis: wakeDelay())
        }
    }

    private func startDueAttempts() {
        let free = concurrency - busyRules.count
        guard free > 0 else { return }
        let rows: [OutboxEntry]
        do {
            rows = try outbox.due(now: clock(), limit: free + busyRules.count, sink: sink.name)
        } catch {
            logger.error("outbox unreadable for sink '\(sink.name)': \(error)", metadata: ["sink": "\(sink.name)"])
            return
        }
        for row in rows where busyRules.count < concurrency && !busyRules.contains(row.alert.rule) {
            if let result = unrecorded[row.id] {
                if (try? record(row, result)) != nil { unrecorded[row.id] = nil }
                continue
            }
            busyRules.insert(row.alert.rule)
            let sink = self.sink
            Task.detached {
                let result = await sink.send(row.alert)
                await self.finish(row, result)
            }
        }
    }

    private func finish(_ row: OutboxEntry, _ result: SinkResult) {
        defer {
            busyRules.remove(row.alert.rule)
            kick()
        }
        do {
            try record(row, result)
        } catch {
            // Kept in memory and recorded before the row is offered again; if the process ends
            // first, the row is attempted again on the next start (at least once, never lost).
            unrecorded[row.id] = result
            logger.error("outbox not updated after delivering \(row.alertID) to '\(sink.name)': \(error)",
                         metadata: ["sink": "\(sink.name)", "alert": "\(row.alertID)"])
        }
    }

    /// Writes an attempt's outcome to the outbox, counts and logs it.
    private func record(_ row: OutboxEntry, _ result: SinkResult) throws {
        let now = clock()
        let name = sink.name
        let metadata: Logger.Metadata = ["sink": "\(name)", "alert": "\(row.alertID)"]
        switch result {
        case .delivered:
            try outbox.markDelivered(row.id)
            counts.delivered += 1
            DeliveryMetric.count(sink: name, .delivered)
        case .permanent(let reason):
            try outbox.markDead(row.id, reason: reason, lastError: reason, now: now)
            counts.dead += 1
            DeliveryMetric.count(sink: name, .dead)
            logger.error("sink '\(name)' rejected \(row.alertID) for good: \(reason); kept as a dead letter",
                         metadata: metadata)
        case .retry(let reason, let after):
            let attempts = row.attempts + 1
            if policy.givesUp(createdAt: row.createdAt, now: now) {
                let why = "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") over "
                    + "\(RetryPolicy.describe(millis: policy.maxAge)): \(reason)"
                try outbox.markDead(row.id, reason: why, lastError: reason, now: now)
                counts.dead += 1
                DeliveryMetric.count(sink: name, .dead)
                logger.error("sink '\(name)' \(why) (\(row.alertID)); kept as a dead letter", metadata: metadata)
            } else {
                let delay = policy.delay(attempts: attempts, retryAfter: after)
                try outbox.markRetry(row.id, after: now + delay, reason: reason)
                counts.retried += 1
                DeliveryMetric.count(sink: name, .retried)
                logger.warning("sink '\(name)' failed to deliver \(row.alertID): \(reason); retry \(attempts) in \(delay) ms",
                               metadata: metadata)
            }
        }
    }

    /// Until the next row falls due, at most `pollInterval` (finished attempts kick earlier).
    private func wakeDelay() -> Int64 {
        guard let next = try? outbox.nextAttemptAt(sink: sink.name) else { return pollInterval }
        let wait = next - clock()
        return wait > 0 ? min(wait, pollInterval) : pollInterval
    }

    private func sleep(millis: Int64) async {
        let task = Task<Void, Never> { _ = try? await Task.sleep(for: .milliseconds(millis)) }
        sleeper = task
        await task.value
        sleeper = nil
    }
}
