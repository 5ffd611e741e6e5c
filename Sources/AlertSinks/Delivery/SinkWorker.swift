import AlertCore
import AlertStore
import Logging
import Synchronization

/// Delivers one sink's outbox rows: up to `concurrency` attempts at once, but never two of the
/// same rule — a rule's rows wait in the order they were enqueued and only the oldest is ever
/// attempted — so a rule's alerts arrive in order, even when one is retried.
///
/// The rows are held in memory; the outbox is their durable copy, written ahead and updated
/// behind: a row reaches the worker (`add`) only once its insert is committed, so nothing is
/// sent that a crash could lose, and an outcome is handed to the outbox's group commit without
/// waiting for it (a "delivered" lost in a crash means one more delivery of that alert, with the
/// same id, after the restart). No SQLite call happens here; under its lock the worker only
/// looks at the oldest row of each rule.
final class SinkWorker: Sendable {
    let sink: any Sink
    private let outbox: Outbox
    private let concurrency: Int
    private let policy: RetryPolicy
    private let pollInterval: Int64
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    private struct State {
        var queues: [String: RuleQueue] = [:]
        /// Rules with an attempt in flight.
        var busy: Set<String> = []
        var counts = DeliveryCounts()
        var started = false
        var stopped = false
        var timer: Task<Void, Never>?
        /// When `timer` fires (epoch ms); `.max` when none is set.
        var timerAt = Int64.max
    }
    private let state = Mutex(State())

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

    /// Rows committed to the outbox, in commit order; a row already held is ignored.
    func add(_ rows: [OutboxEntry]) {
        guard !rows.isEmpty else { return }
        state.withLock { state in
            for row in rows { state.queues[row.alert.rule, default: RuleQueue()].insert(row) }
        }
        startDueAttempts()
    }

    func start() {
        state.withLock { $0.started = true }
        startDueAttempts()
    }

    /// No new attempts from now on; attempts in flight still record their outcome.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.timer?.cancel()
        }
    }

    var counts: DeliveryCounts { state.withLock { $0.counts } }

    /// Nothing in flight and no row that can be attempted before `until` (epoch ms): each rule's
    /// oldest row, which holds up the others, falls due later or there is none.
    func isSettled(before until: Int64) -> Bool {
        state.withLock { state in
            state.busy.isEmpty && !state.queues.values.contains { ($0.first?.nextAttemptAt ?? .max) < until }
        }
    }

    /// Holds no row: each was delivered or became a dead letter.
    var isEmpty: Bool {
        state.withLock { $0.queues.isEmpty }
    }

    /// Starts an attempt for each rule whose oldest row is due (oldest due first, as many as
    /// `concurrency` allows), and sets the timer for the next row that falls due later.
    private func startDueAttempts() {
        let now = clock()
        let starting: [OutboxEntry] = state.withLock { state in
            // Every slot taken: a finishing attempt calls again (and sets the timer).
            guard state.started, !state.stopped, state.busy.count < concurrency else { return [] }
            var due: [OutboxEntry] = []
            var next = Int64.max
            for (rule, queue) in state.queues where !state.busy.contains(rule) {
                guard let row = queue.first else { continue }
                if row.nextAttemptAt <= now { due.append(row) } else { next = min(next, row.nextAttemptAt) }
            }
            // Rows due but over the concurrency wait for a finishing attempt, which calls again.
            due.sort { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
            let starting = due.prefix(max(0, concurrency - state.busy.count))
            for row in starting { state.busy.insert(row.alert.rule) }
            if next < state.timerAt { setTimer(&state, at: next, now: now) }
            return Array(starting)
        }
        for row in starting {
            Task.detached {
                let result = await self.sink.send(row.alert)
                self.finish(row, result)
            }
        }
    }

    /// Wakes at `at`, or after `pollInterval` if that is sooner (a clock that is not the wall
    /// clock, in tests, is looked at again at least that often).
    private func setTimer(_ state: inout State, at: Int64, now: Int64) {
        state.timer?.cancel()
        state.timerAt = at
        let delay = min(max(at - now, 1), pollInterval)
        state.timer = Task {
            try? await Task.sleep(for: .milliseconds(delay))
            guard !Task.isCancelled else { return }
            self.state.withLock { state in
                state.timer = nil
                state.timerAt = .max
            }
            self.startDueAttempts()
        }
    }

    private func finish(_ row: OutboxEntry, _ result: SinkResult) {
        let outcome = decide(row, result, now: clock())
        let rule = row.alert.rule
        state.withLock { state in
            state.busy.remove(rule)
            switch outcome {
            case .delivered:
                state.counts.delivered += 1
                state.queues[rule]?.removeFirst(row.id)
            case .dead:
                state.counts.dead += 1
                state.queues[rule]?.removeFirst(row.id)
            case .retry(let at, let reason):
                state.counts.retried += 1
                state.queues[rule]?.retryFirst(row.id, at: at, reason: reason)
            }
            if state.queues[rule]?.first == nil { state.queues[rule] = nil }
        }
        let (name, logger) = (sink.name, logger)
        switch outcome {
        case .delivered: DeliveryMetric.count(sink: name, .delivered)
        case .dead: DeliveryMetric.count(sink: name, .dead)
        case .retry: DeliveryMetric.count(sink: name, .retried)
        }
        outbox.record(row.id, outcome) { error in
            // Tried again with every later commit; if the process ends first, the row is
            // attempted again on the next start (at least once, never lost).
            logger.error("outbox not updated after an attempt to deliver \(row.alertID) to '\(name)': \(error)",
                         metadata: ["sink": "\(name)", "alert": "\(row.alertID)"])
        }
        startDueAttempts()
    }

    /// What an attempt's result means for its row (by the retry policy), logged.
    private func decide(_ row: OutboxEntry, _ result: SinkResult, now: Int64) -> OutboxOutcome {
        let name = sink.name
        let metadata: Logger.Metadata = ["sink": "\(name)", "alert": "\(row.alertID)"]
        switch result {
        case .delivered:
            return .delivered
        case .permanent(let reason):
            logger.error("sink '\(name)' rejected \(row.alertID) for good: \(reason); kept as a dead letter",
                         metadata: metadata)
            return .dead(reason: reason, lastError: reason, at: now)
        case .retry(let reason, let after):
            let attempts = row.attempts + 1
            if policy.givesUp(createdAt: row.createdAt, now: now) {
                let why = "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") over "
                    + "\(RetryPolicy.describe(millis: policy.maxAge)): \(reason)"
                logger.error("sink '\(name)' \(why) (\(row.alertID)); kept as a dead letter", metadata: metadata)
                return .dead(reason: why, lastError: reason, at: now)
            }
            let delay = policy.delay(attempts: attempts, retryAfter: after)
            logger.warning("sink '\(name)' failed to deliver \(row.alertID): \(reason); retry \(attempts) in \(delay) ms",
                           metadata: metadata)
            return .retry(at: now + delay, reason: reason)
        }
    }
}

/// One rule's rows for one sink, oldest (lowest id) first.
struct RuleQueue {
    private var rows: [OutboxEntry] = []
    /// Rows before `head` are done; they are dropped once they are half the array.
    private var head = 0

    var first: OutboxEntry? { head < rows.count ? rows[head] : nil }

    /// Keeps id order; a row already held is ignored.
    mutating func insert(_ row: OutboxEntry) {
        guard let last = rows.last, row.id <= last.id else {
            rows.append(row)
            return
        }
        let live = rows[head...]
        guard !live.contains(where: { $0.id == row.id }) else { return }
        let index = live.firstIndex { $0.id > row.id } ?? rows.endIndex
        rows.insert(row, at: index)
    }

    mutating func removeFirst(_ id: Int64) {
        guard first?.id == id else { return }
        head += 1
        if head * 2 >= rows.count {
            rows.removeFirst(head)
            head = 0
        }
    }

    mutating func retryFirst(_ id: Int64, at: Int64, reason: String) {
        guard first?.id == id else { return }
        rows[head].attempts += 1
        rows[head].nextAttemptAt = at
        rows[head].lastError = reason
    }
}
