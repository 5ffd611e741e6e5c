import AlertModel
import AlertPolicy
import AlertSinks
import Logging
import Platform
import Synchronization

/// Delivers one sink's outbox rows: the rate, retry and fallback stages for that sink
/// (Docs/sinks.md#rate, #fallback).
///
/// - Order: rows wait in lanes — one per rule, and one for digests of several rules — in the
///   order they were enqueued; only a lane's oldest rows are ever attempted and a lane has at
///   most one attempt in flight, so a rule's events arrive in order, even when one is retried.
/// - Rate: with a `rate`, at most `count` attempts (a digest counts as one) start in any `per`
///   milliseconds of the monotonic clock, counting each from when it ended once it has (so the
///   receiver, which sees it in between, never counts more); the rest wait, in order, and
///   nothing is dropped.
/// - Backlog batching: when more events wait than the rate's `count`, the next attempt carries
///   the waiting rows from the front (oldest first, each lane's in order) up to `batchMax`
///   events as one digest, `digest:SINK:<first event id>`. Its rows get one outcome together;
///   a crash before it is recorded delivers them again, batched from the same first row, so
///   with the same id.
/// - Urgent rows (high priority) leave before the others, alone; they count against the rate.
/// - Retries back off by `RetryPolicy` (never sooner than `Retry-After`); a row that fails for
///   good, or is still failing at `maxAge`, becomes a dead letter, and with a `fallback` its
///   delivery is handed to that sink with the same id (`handOn`).
///
/// Time: every interval (the rate's window, backoff, `maxAge`, when a row falls due) is read and
/// waited for on the injected monotonic clock (`elapsed`), so setting the time of day neither
/// holds deliveries back nor gives rows up early. The wall clock (`clock`) only stamps what the outbox keeps
/// (when a retry is due, when a row died); a row entering the worker is put on the monotonic
/// timeline by how old it is and how long it still has to wait at that moment.
///
/// The rows are held in memory; the outbox is their durable copy, written ahead and updated
/// behind: a row reaches the worker (`add`) only once its insert is committed, so nothing is
/// sent that a crash could lose, and an outcome is handed to the outbox's group commit without
/// waiting for it (a "delivered" lost in a crash means one more delivery, with the same id,
/// after the restart). No outbox call waits here; under its lock the worker only looks at the
/// oldest rows of each lane.
///
/// Shared outbox (`SharedOutbox`: several processes deliver from it): rows reach the worker only
/// by claims, never by `add` (which then only wakes the claims): it claims, at each wake-up and
/// at least every `pollInterval`, as many due rows as keep twice `concurrency` held, and renews
/// the lease of those it holds every third of a lease. It starts an attempt on a row only while
/// its claim has more than a third of a lease to run, counted on the monotonic clock from
/// before the claim or renewal that took it: a worker held up past a row's claim (its process
/// paused) renews first, and lets the row go if another process has claimed it since, rather
/// than send it a second time. A retried row goes back to the outbox, leased by
/// no one, and is claimed again when it is due (by any process), so later rows of its rule may
/// arrive before it. With a `rate`, every attempt first takes its place in the window every
/// process shares (`beginAttempt`), claims up to `batchMax` rows only then, sends them (one, or
/// a digest of them all when more events wait than `count`), releases the rest and settles the
/// place when the attempt ends, so all processes together keep the rate.
final class SinkWorker: Sendable {
    /// Where a sink's dead letters go next.
    struct Fallback: Sendable {
        var sink: String
        /// Its rows go through the outbox (webhook, exec); otherwise it is sent directly.
        var durable: Bool
    }

    let sink: any Sink
    private let outbox: any DeliveryOutbox
    private let concurrency: Int
    private let policy: RetryPolicy
    private let batchMax: Int
    private let fallback: Fallback?
    /// Takes the deliveries a dead letter leaves for `fallback`: rows already in the outbox when
    /// it is durable, rows made in memory (never written) when it is sent directly. Returns once
    /// they are with the fallback's worker, or delivered directly (or a dead letter there).
    private let handOn: @Sendable ([OutboxEntry]) async -> Void
    private let pollInterval: Int64
    /// The time of day (epoch ms), for what the outbox keeps.
    private let clock: @Sendable () -> Int64
    /// Monotonic milliseconds, for every interval; the rows held carry times on this timeline.
    private let elapsed: ElapsedMillis
    private let logger: Logger
    /// The outbox when several processes deliver from it: rows come only by its claims.
    private let shared: (any SharedOutbox)?
    /// The rate, kept in `shared`'s window rather than in memory (`State.rate` is then nil).
    private let sharedRate: RateSpec?
    /// Wakes the claims (a row was enqueued, an attempt ended).
    private let wake = Wakeup()

    private struct State {
        var lanes: [String: Lane] = [:]
        /// Lanes with an attempt in flight.
        var busy: Set<String> = []
        var inFlight = 0
        /// Dead letters being handed to the fallback: `drain` waits for them too.
        var handingOn = 0
        /// Events in rows held and not in flight.
        var waitingEvents = 0
        var rate: RateLimit?
        var counts = DeliveryCounts()
        var started = false
        var stopped = false
        var timer: Task<Void, Never>?
        /// When `timer` fires (monotonic ms); `.max` when none is set.
        var timerAt = Int64.max
        /// The claims (shared outbox only).
        var claims: Task<Void, Never>?
        /// The last claim found fewer due rows than it asked for (shared outbox only).
        var caughtUp = false
        /// When the leases of the rows held were last renewed (monotonic ms; shared outbox only).
        var renewed: Int64 = 0
        /// The ids of the rows attempts carry.
        var flying: Set<Int64> = []
        /// When the claim on each row held ends, at the latest (monotonic ms; shared outbox
        /// only): a lease from before the claim or renewal that took it.
        var claimedUntil: [Int64: Int64] = [:]
    }
    private let state: Mutex<State>

    init(
        sink: any Sink, outbox: any DeliveryOutbox, concurrency: Int, policy: RetryPolicy,
        rate: RateSpec? = nil, batchMax: Int = GroupSpec.defaultMax, fallback: Fallback? = nil,
        handOn: @escaping @Sendable ([OutboxEntry]) async -> Void = { _ in }, pollInterval: Int64,
        clock: @escaping @Sendable () -> Int64, elapsed: ElapsedMillis, logger: Logger
    ) {
        self.sink = sink
        self.outbox = outbox
        self.concurrency = max(1, concurrency)
        self.policy = policy
        self.batchMax = max(1, batchMax)
        self.fallback = fallback
        self.handOn = handOn
        self.pollInterval = max(1, pollInterval)
        self.clock = clock
        self.elapsed = elapsed
        self.logger = logger
        let shared = outbox as? any SharedOutbox
        self.shared = shared
        self.sharedRate = shared == nil ? nil : rate
        self.state = Mutex(State(rate: shared == nil ? rate.map(RateLimit.init) : nil))
    }

    /// Rows committed to the outbox, in commit order; a row already held is ignored. With a
    /// shared outbox the rows are claimed instead, as any process may take them.
    func add(_ rows: [OutboxEntry]) {
        guard !rows.isEmpty else { return }
        if shared != nil {
            state.withLock { $0.caughtUp = false }
            wake.signal()
            return
        }
        let (wall, now) = (clock(), elapsed())
        state.withLock { Self.insert(rows, &$0, wall: wall, now: now) }
        startDueAttempts()
    }

    /// Puts `rows` in their lanes; a row already held is ignored.
    private static func insert(_ rows: [OutboxEntry], _ state: inout State, wall: Int64, now: Int64) {
        for row in rows.map({ held($0, wall: wall, now: now) })
        where state.lanes[lane(of: row), default: Lane()].insert(row) {
            state.waitingEvents += row.delivery.events.count
        }
    }

    func start() {
        state.withLock { $0.started = true }
        if let shared {
            let claims = Task { await self.claim(from: shared) }
            state.withLock { $0.claims = claims }
            return
        }
        startDueAttempts()
    }

    /// No new attempts from now on; attempts in flight still record their outcome. With a
    /// shared outbox, the rows held and not in flight are released for other processes.
    func stop() {
        let waiting: [Int64] = state.withLock { state in
            state.stopped = true
            state.timer?.cancel()
            state.claims?.cancel()
            return shared == nil ? [] : Self.waitingRows(state).map(\.id)
        }
        wake.signal()
        if let shared, !waiting.isEmpty { Task { try? await shared.release(waiting) } }
    }

    var counts: DeliveryCounts { state.withLock { $0.counts } }

    /// Nothing in flight and no row that can be attempted before `until` (monotonic ms): each
    /// lane's oldest row, which holds up the others, falls due later or there is none.
    /// With a shared outbox, also: the last claim found every due row.
    func isSettled(before until: Int64) -> Bool {
        state.withLock { state in
            state.busy.isEmpty && state.handingOn == 0 && (shared == nil || state.caughtUp)
                && !state.lanes.values.contains { ($0.first?.nextAttemptAt ?? .max) < until }
        }
    }

    /// Holds no row: each was delivered or became a dead letter.
    var isEmpty: Bool {
        state.withLock { $0.lanes.isEmpty }
    }

    /// `row` as the worker holds it: `createdAt` and `nextAttemptAt` moved from the time of day
    /// `wall` to the monotonic timeline, where it is `now`, keeping its age and its wait. The
    /// wait is never longer than the row was given when it was stamped (`nextAttemptAt -
    /// createdAt`): a time of day set back between the stamp and `wall` would otherwise add the
    /// whole step to it (a row stamped before a one-hour step back, due at once, would wait an
    /// hour and hold its lane).
    static func held(_ row: OutboxEntry, wall: Int64, now: Int64) -> OutboxEntry {
        var row = row
        let age = wall > row.createdAt ? wall - row.createdAt : 0
        let planned = row.nextAttemptAt > row.createdAt ? row.nextAttemptAt - row.createdAt : 0
        let wait = row.nextAttemptAt > wall ? min(row.nextAttemptAt - wall, planned) : 0
        row.createdAt = now - age
        let (due, overflow) = now.addingReportingOverflow(wait)
        row.nextAttemptAt = overflow ? .max : due
        return row
    }

    /// The lane a row waits in: its rule, or one lane for digests of several rules.
    static func lane(of row: OutboxEntry) -> String {
        let events = row.delivery.events
        let rule = events[0].rule
        return events.allSatisfy { $0.rule == rule } ? rule : ""
    }

    /// Starts as many attempts as `concurrency` and the rate allow, each on the oldest rows
    /// that are due (urgent ones first), and sets the timer for when the next can start.
    private func startDueAttempts() {
        let now = elapsed()
        let starting: [[OutboxEntry]] = state.withLock { state in
            // Every slot taken: a finishing attempt calls again (and sets the timer). Under a
            // shared rate, only a place in its window starts an attempt (`claimGranted`).
            guard state.started, !state.stopped, sharedRate == nil else { return [] }
            var attempts: [[OutboxEntry]] = []
            var next = Int64.max
            while state.inFlight < concurrency {
                let (rows, due) = pick(state, now: now, rate: state.rate?.spec)
                next = min(next, due)
                guard !rows.isEmpty else { break }
                if let rate = state.rate, rate.nextStart(now: now) > now {
                    next = min(next, rate.nextStart(now: now))
                    break
                }
                state.rate?.begin(now)
                Self.take(rows, &state)
                attempts.append(rows)
            }
            if next < state.timerAt { setTimer(&state, at: next, now: now) }
            return attempts
        }
        for rows in starting { launch(rows, started: now) }
    }

    /// Sends `rows` (taken from their lanes) as one attempt, begun at `started` (monotonic);
    /// `grant` is its place in the shared rate's window.
    private func launch(_ rows: [OutboxEntry], started: Int64, grant: Int64? = nil) {
        let delivery =
            rows.count == 1
            ? rows[0].delivery
            : Delivery(
                sink: sink.name, events: rows.flatMap(\.delivery.events), held: rows.allSatisfy(\.delivery.held))
        Task.detached {
            let result = await self.sink.send(delivery)
            self.finish(rows, delivery, result, started: started, grant: grant)
        }
    }

    /// Takes `rows` from their lanes for an attempt.
    private static func take(_ rows: [OutboxEntry], _ state: inout State) {
        state.inFlight += 1
        for row in rows {
            state.flying.insert(row.id)
            state.busy.insert(lane(of: row))
            state.waitingEvents -= row.delivery.events.count
        }
    }

    /// The rows held that no attempt carries.
    private static func waitingRows(_ state: State) -> [OutboxEntry] {
        state.lanes.values.flatMap { $0.rows.filter { !state.flying.contains($0.id) } }
    }

    /// Removes rows that no attempt carries from their lanes (they go back to a shared outbox).
    private static func drop(_ ids: Set<Int64>, _ state: inout State) {
        for id in ids { state.claimedUntil[id] = nil }
        for (name, lane) in state.lanes {
            let kept = lane.rows.filter { !ids.contains($0.id) }
            guard kept.count != lane.rows.count else { continue }
            state.waitingEvents -= lane.rows.filter { ids.contains($0.id) }.reduce(0) { $0 + $1.delivery.events.count }
            var rebuilt = Lane()
            for row in kept { _ = rebuilt.insert(row) }
            state.lanes[name] = kept.isEmpty ? nil : rebuilt
        }
    }

    // MARK: A shared outbox

    /// Claims rows while the worker runs: without a rate, enough to keep twice `concurrency`
    /// held; with one, up to `batchMax` for each place the shared window gives.
    private func claim(from shared: any SharedOutbox) async {
        while !Task.isCancelled {
            let wait: Int64
            do {
                try await renewLeases(shared)
                if let rate = sharedRate {
                    wait = try await claimGranted(from: shared, rate: rate)
                } else {
                    wait = try await claimDue(from: shared)
                }
            } catch {
                logger.debug(
                    "sink '\(sink.name)': cannot claim rows from the outbox: \(outbox.reason(error))",
                    metadata: ["sink": "\(sink.name)"])
                wait = pollInterval
            }
            if wait > 0 { await wake.wait(milliseconds: min(wait, pollInterval), on: elapsed) }
        }
    }

    /// One claim without a rate; returns how long to wait before the next (0: at once).
    private func claimDue(from shared: any SharedOutbox) async throws -> Int64 {
        // Claims when at most `concurrency` rows are held.
        let limit = state.withLock { state -> Int in
            let held = state.lanes.values.reduce(0) { $0 + $1.rows.count }
            return state.stopped || held > concurrency ? 0 : 2 * concurrency - held
        }
        guard limit > 0 else { return pollInterval }
        let asked = elapsed()
        let rows = try await shared.claim(sink: sink.name, limit: limit, now: clock())
        let (wall, now) = (clock(), elapsed())
        state.withLock { state in
            state.caughtUp = rows.count < limit
            Self.insert(rows, &state, wall: wall, now: now)
            for row in rows { state.claimedUntil[row.id] = asked + shared.claimLease }
        }
        startDueAttempts()
        return rows.count == limit ? 0 : pollInterval
    }

    /// Renews the leases of the rows held (in flight or waiting) once a third of a lease has
    /// passed since the last renewal that succeeded, so no other process takes them while they
    /// are held. A waiting row whose lease could not be renewed (this process was held up past
    /// it, and another process claimed the row) is let go: that process sends it.
    private func renewLeases(_ shared: any SharedOutbox) async throws {
        let now = elapsed()
        let keeping = state.withLock { state -> [Int64]? in
            guard now - state.renewed >= shared.claimLease / 3 else { return nil }
            return state.lanes.values.flatMap { $0.rows.map(\.id) }
        }
        guard let keeping else { return }
        let renewed = try await shared.renew(keeping, now: clock())
        let lost = state.withLock { state -> Set<Int64> in
            state.renewed = now
            for id in renewed where state.claimedUntil[id] != nil { state.claimedUntil[id] = now + shared.claimLease }
            // Rows that ended meanwhile (recorded, or retried: no longer held) are not lost.
            let waiting = Set(Self.waitingRows(state).map(\.id))
            let lost = Set(keeping).subtracting(renewed).intersection(waiting)
            Self.drop(lost, &state)
            return lost
        }
        // Rows that waited for their claim to be renewed may start now.
        startDueAttempts()
        guard !lost.isEmpty else { return }
        logger.warning(
            "sink '\(sink.name)': the claims of \(lost.count) waiting outbox rows ran out before they were renewed; another process sends them",
            metadata: ["sink": "\(sink.name)"])
    }

    /// One attempt under the shared rate: a place in the window, then the rows it carries;
    /// returns how long to wait before the next (0: at once).
    private func claimGranted(from shared: any SharedOutbox, rate: RateSpec) async throws -> Int64 {
        let free = state.withLock { $0.inFlight < concurrency && !$0.stopped }
        guard free else { return pollInterval }
        switch try await shared.beginAttempt(sink: sink.name, rate: rate) {
        case .wait(let millis):
            // An attempt in flight decides: ours wakes the claims when it ends, another
            // process's is looked for again soon.
            return millis ?? min(pollInterval, 50)
        case .start(let grant):
            let asked = elapsed()
            let rows = try await shared.claim(sink: sink.name, limit: batchMax, now: clock())
            let (wall, now) = (clock(), elapsed())
            let (attempt, left) = state.withLock { state -> ([OutboxEntry], [Int64]) in
                Self.insert(rows, &state, wall: wall, now: now)
                for row in rows { state.claimedUntil[row.id] = asked + shared.claimLease }
                state.caughtUp = rows.isEmpty
                let claimed = Set(rows.map(\.id))
                var attempt: [OutboxEntry] = []
                if !state.stopped {
                    let (picked, _) = pick(state, now: now, rate: rate)
                    attempt = picked.filter { claimed.contains($0.id) }
                }
                if !attempt.isEmpty { Self.take(attempt, &state) }
                let sent = Set(attempt.map(\.id))
                let left = claimed.subtracting(sent)
                Self.drop(left, &state)
                return (attempt, Array(left))
            }
            if !left.isEmpty { try? await shared.release(left) }
            guard !attempt.isEmpty else {
                try await shared.cancelAttempt(sink: sink.name, rate: rate, started: grant)
                return pollInterval
            }
            launch(attempt, started: now, grant: grant)
            return 0
        }
    }

    /// The rows of the next attempt at `now` (none when nothing is due), and the earliest time
    /// a row that is not due yet falls due.
    private func pick(_ state: State, now: Int64, rate: RateSpec?) -> (rows: [OutboxEntry], nextDue: Int64) {
        var heads: [OutboxEntry] = []
        var next = Int64.max
        for (name, lane) in state.lanes where !state.busy.contains(name) {
            // A row whose claim may run out before its attempt ends waits for the renewal,
            // which starts the attempts again.
            guard let row = lane.first, claimHolds(row, state, now: now) else { continue }
            if row.nextAttemptAt <= now { heads.append(row) } else { next = min(next, row.nextAttemptAt) }
        }
        guard !heads.isEmpty else { return ([], next) }
        if let urgent = heads.filter(\.urgent).min(by: { $0.id < $1.id }) { return ([urgent], next) }
        if let rate, state.waitingEvents > rate.count {
            return (batch(state, now: now), next)
        }
        return ([heads.min { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }!], next)
    }

    /// Whether `row`'s claim has more than a third of a lease to run at `now` (always, without
    /// a shared outbox): a renewal is due once a third of a lease has passed since the last, so
    /// a live worker's rows always have more.
    private func claimHolds(_ row: OutboxEntry, _ state: State, now: Int64) -> Bool {
        guard let shared, let until = state.claimedUntil[row.id] else { return true }
        return until - now > shared.claimLease / 3
    }

    /// The waiting rows from the front, oldest first, up to `batchMax` events (at least one
    /// row): each free lane's due rows up to its first urgent or not yet due one, merged by id,
    /// stopping at the first that does not fit, so each lane gives a prefix of its rows.
    private func batch(_ state: State, now: Int64) -> [OutboxEntry] {
        var candidates: [OutboxEntry] = []
        for (name, lane) in state.lanes where !state.busy.contains(name) {
            var events = 0
            for row in lane.rows {
                guard row.nextAttemptAt <= now, !row.urgent, events < batchMax, claimHolds(row, state, now: now)
                else { break }
                events += row.delivery.events.count
                candidates.append(row)
            }
        }
        candidates.sort { $0.id < $1.id }
        var taken: [OutboxEntry] = []
        var events = 0
        for row in candidates {
            let count = row.delivery.events.count
            if !taken.isEmpty, events + count > batchMax { break }
            taken.append(row)
            events += count
        }
        return taken
    }

    /// Wakes at `at`, or after `pollInterval` if that is sooner, both on the injected clock
    /// (`elapsed`), so a test that drives the clock drives the timer.
    private func setTimer(_ state: inout State, at: Int64, now: Int64) {
        state.timer?.cancel()
        state.timerAt = at
        let delay = min(max(at - now, 1), pollInterval)
        let elapsed = elapsed
        state.timer = Task {
            try? await elapsed.sleep(for: .milliseconds(delay))
            guard !Task.isCancelled else { return }
            self.state.withLock { state in
                state.timer = nil
                state.timerAt = .max
            }
            self.startDueAttempts()
        }
    }

    /// Records an attempt's outcome. The outcome is handed to the outbox before the attempt
    /// stops counting as in flight, so once `isSettled` holds, a `commit` (the drain's) comes
    /// after every outcome and a flush counts no delivered row as still pending.
    private func finish(
        _ rows: [OutboxEntry], _ delivery: Delivery, _ result: SinkResult, started: Int64, grant: Int64?
    ) {
        let (wall, now) = (clock(), elapsed())
        var outcome = decide(rows, delivery, result, wall: wall, now: now)
        if case .dead(let reason, let lastError, let at, _) = outcome, let fallback, fallback.durable {
            outcome = .dead(reason: reason, lastError: lastError, at: at, fallback: fallback.sink)
        }
        let handsOn: Bool
        if case .dead = outcome, fallback != nil { handsOn = true } else { handsOn = false }
        if handsOn { state.withLock { $0.handingOn += 1 } }
        let direct: [OutboxEntry]
        if case .dead(_, _, let at, nil) = outcome, let fallback, !fallback.durable {
            direct = rows.map {
                OutboxEntry(
                    id: 0, sink: fallback.sink, delivery: $0.delivery, urgent: $0.urgent,
                    createdAt: at, nextAttemptAt: at)
            }
        } else {
            direct = []
        }
        let (name, logger, handOn) = (sink.name, logger, handOn)
        let dead = if case .dead = outcome { true } else { false }
        outbox.record(
            rows.map(\.id), outcome,
            committed: { recorded in
                if dead { self.deadLettered(recorded.deadLetters, of: rows.count, delivery) }
                guard handsOn else { return }
                Task {
                    await handOn(recorded.moved + direct)
                    self.state.withLock { $0.handingOn -= 1 }
                }
            },
            failed: { error in
                // Tried again with every later commit; if the process ends first, the rows are
                // attempted again on the next start (at least once, never lost).
                let metadata: Logger.Metadata = ["sink": "\(name)", "alert": "\(delivery.id)"]
                if error is OutboxClosed {
                    logger.notice(
                        "the attempt to deliver \(delivery.id) to '\(name)' ended after the outbox was closed at exit; it is attempted again at the next start",
                        metadata: metadata)
                } else {
                    logger.error(
                        "outbox not updated after an attempt to deliver \(delivery.id) to '\(name)': \(error)",
                        metadata: metadata)
                }
            })
        state.withLock { state in
            state.inFlight -= 1
            state.flying.subtract(rows.map(\.id))
            for row in rows { state.claimedUntil[row.id] = nil }
            state.rate?.settle(started: started, now: now)
            for row in rows {
                let lane = Self.lane(of: row)
                state.busy.remove(lane)
                switch outcome {
                case .delivered:
                    state.counts.delivered += 1
                    state.lanes[lane]?.remove(row.id)
                case .dead:
                    // Counted once written (`deadLettered`).
                    state.lanes[lane]?.remove(row.id)
                case .retry(let at, let reason):
                    state.counts.retried += 1
                    if shared != nil {
                        // Back to the shared outbox, leased by no one, until it is due.
                        state.lanes[lane]?.remove(row.id)
                    } else {
                        state.waitingEvents += row.delivery.events.count
                        state.lanes[lane]?.retry(row.id, at: now + (at - wall), reason: reason)
                    }
                }
                if state.lanes[lane]?.first == nil { state.lanes[lane] = nil }
            }
        }
        if let shared, let grant, let rate = sharedRate {
            let wake = wake
            Task {
                // Unsettled, the place counts as ended when its lease runs out.
                try? await shared.settleAttempt(sink: name, rate: rate, started: grant)
                wake.signal()
            }
        } else {
            wake.signal()
        }
        for _ in rows {
            switch outcome {
            case .delivered: DeliveryMetric.count(sink: name, .delivered)
            case .dead: break
            case .retry: DeliveryMetric.count(sink: name, .retried)
            }
        }
        startDueAttempts()
    }

    /// Counts the dead letters an attempt's outcome made once they are written. A row whose
    /// claim ran out during the attempt and that another deliverer claimed since is not one:
    /// that deliverer decides its outcome (Docs/postgres.md#several-deliverers-one-outbox).
    private func deadLettered(_ made: Int, of rows: Int, _ delivery: Delivery) {
        state.withLock { $0.counts.dead += made }
        for _ in 0..<made { DeliveryMetric.count(sink: sink.name, .dead) }
        guard made < rows else { return }
        logger.notice(
            "sink '\(sink.name)': \(delivery.id) made no dead letter for \(rows - made) of its \(rows) rows: another deliverer claimed them once this attempt's claim ran out, and decides what becomes of them",
            metadata: ["sink": "\(sink.name)", "alert": "\(delivery.id)"])
    }

    /// What an attempt's result means for its rows (by the retry policy), logged, with the times
    /// the outbox keeps on the time of day `wall`; `now` is monotonic, as the rows' times are. A
    /// batch is as old as its oldest row and has been tried as often as its most tried one.
    private func decide(
        _ rows: [OutboxEntry], _ delivery: Delivery, _ result: SinkResult,
        wall: Int64, now: Int64
    ) -> OutboxOutcome {
        let name = sink.name
        let metadata: Logger.Metadata = ["sink": "\(name)", "alert": "\(delivery.id)"]
        let onward = fallback.map { "; handed to '\($0.sink)'" } ?? ""
        switch result {
        case .delivered:
            return .delivered
        case .permanent(let reason):
            logger.error(
                "sink '\(name)' rejected \(delivery.id) for good: \(reason); kept as a dead letter\(onward)",
                metadata: metadata)
            return .dead(reason: reason, lastError: reason, at: wall)
        case .retry(let reason, let after):
            let attempts = (rows.map(\.attempts).max() ?? 0) + 1
            let createdAt = rows.map(\.createdAt).min() ?? now
            if policy.givesUp(createdAt: createdAt, now: now) {
                let why =
                    "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") over "
                    + "\(RetryPolicy.describe(millis: policy.maxAge)): \(reason)"
                logger.error(
                    "sink '\(name)' \(why) (\(delivery.id)); kept as a dead letter\(onward)", metadata: metadata)
                return .dead(reason: why, lastError: reason, at: wall)
            }
            let delay = policy.delay(attempts: attempts, retryAfter: after)
            logger.warning(
                "sink '\(name)' failed to deliver \(delivery.id): \(reason); retry \(attempts) in \(delay) ms",
                metadata: metadata)
            return .retry(at: wall + delay, reason: reason)
        }
    }
}

/// One lane's rows for one sink, oldest (lowest id) first.
struct Lane {
    private var all: [OutboxEntry] = []
    /// Rows before `head` are done; they are dropped once they are half the array.
    private var head = 0

    var first: OutboxEntry? { head < all.count ? all[head] : nil }

    /// The rows still held, oldest first.
    var rows: ArraySlice<OutboxEntry> { all[head...] }

    /// Keeps id order; a row already held is ignored (false).
    mutating func insert(_ row: OutboxEntry) -> Bool {
        guard let last = all.last, row.id <= last.id else {
            all.append(row)
            return true
        }
        let live = all[head...]
        guard !live.contains(where: { $0.id == row.id }) else { return false }
        let index = live.firstIndex { $0.id > row.id } ?? all.endIndex
        all.insert(row, at: index)
        return true
    }

    /// Removes the row `id` wherever it is. An attempt's rows are the front of their lane when
    /// they start, but a shared outbox can hand over an older row of the same rule while they
    /// are in flight (a dead deliverer's row whose lease ran out), which then stands before
    /// them: a finished row must leave the lane even so, or it would be sent again.
    mutating func remove(_ id: Int64) {
        if first?.id == id {
            head += 1
        } else if let index = all[head...].firstIndex(where: { $0.id == id }) {
            all.remove(at: index)
        } else {
            return
        }
        if head * 2 >= all.count {
            all.removeFirst(head)
            head = 0
        }
    }

    mutating func retry(_ id: Int64, at: Int64, reason: String) {
        guard let index = all[head...].firstIndex(where: { $0.id == id }) else { return }
        all[index].attempts += 1
        all[index].nextAttemptAt = at
        all[index].lastError = reason
    }
}

/// Wakes one waiting task early: `signal` ends the current `wait`, or the next one at once.
final class Wakeup: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            if state.waiter == nil { state.signalled = true }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns on a signal, or once `milliseconds` have passed on `clock`.
    func wait(milliseconds: Int64, on clock: ElapsedMillis) async {
        let timer = Task {
            try? await clock.sleep(for: .milliseconds(max(1, milliseconds)))
            if !Task.isCancelled { self.signal() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }
}
