import AlertModel
import AlertOutbox
import AlertPolicy
import AlertStore
import Logging
import PostgresNIO
import Synchronization

/// The durable outbox in PostgreSQL, with the rows of `AlertStore.Outbox`: a row per (delivery,
/// sink) written before delivery starts, deleted only after success, or moved to `dead_letters`
/// with the reason; each alert's fields stored once in `alerts` with the number of rows that
/// name it. Sink secrets are never stored. Times are epoch ms, from the caller's clock.
///
/// Several processes can deliver from one outbox: `claim` takes due rows with
/// `FOR UPDATE SKIP LOCKED` and a lease, so two never take the same row while the lease runs,
/// and a row whose sender died is taken again, with the same id, once its lease has run out.
///
/// The `DeliveryOutbox` methods return at once; their writes are jobs on the store's one queue,
/// in the order handed over, those that wait together in one transaction (`submit`). A write that
/// fails is reported and kept, and
/// tried again before every later write and at `commit`, while the process runs.
public final class PostgresOutbox: FlushableOutbox, SharedOutbox {
    let queue: PostgresQueue
    /// Set when several instances share the store: inserts go under the fence, with the ledger.
    let fencing: StoreFencing
    private let unwritten = Mutex<[Write]>([])
    /// Writes handed over and not yet taken by a job, and whether a job to take them is queued.
    private let grouped = Mutex<(writes: [Write], scheduled: Bool)>(([], false))
    /// This outbox's name in the leases it takes (`locked_by`): the process and a number, so
    /// two stores open in one process never take each other's rows for their own.
    public let owner: String
    /// How long a claim leases a row (ms); `SinkWorker` renews what it holds every third of it.
    public let claimLease: Int64 = 30_000
    /// How long an attempt holds its place in a shared rate window unless settled (ms): a dead
    /// deliverer's place holds the window no longer; an attempt that runs longer counts as
    /// ended then (Docs/postgres.md#a-sinks-rate-across-instances).
    static let rateLease: Int64 = 120_000

    init(_ queue: PostgresQueue, fencing: StoreFencing = StoreFencing()) {
        self.queue = queue
        self.fencing = fencing
        let number = Self.opened.add(1, ordering: .relaxed).newValue
        owner = "\(PostgresLeadership.Instance.current(sources: []).id)-\(number)"
    }

    private static let opened = Atomic<Int>(0)

    /// A write kept until it is made: `apply` runs in a transaction and returns what to call
    /// once it is committed.
    /// Each write has an id, so a kept one is dropped only once it is committed.
    struct Write: Sendable {
        var id = Write.ids.add(1, ordering: .relaxed).newValue
        var apply: @Sendable (PostgresConnection, Logger) async throws -> @Sendable () -> Void
        var failed: @Sendable (any Error) -> Void
        /// Set when all the write does is record its rows as delivered: writes of that kind
        /// next to each other in a group are made by one `remove` of all their rows, and each
        /// one's `committed` is called.
        var delivered: (ids: [Int64], committed: @Sendable () -> Void)?

        init(
            apply: @escaping @Sendable (PostgresConnection, Logger) async throws -> @Sendable () -> Void,
            failed: @escaping @Sendable (any Error) -> Void
        ) {
            self.apply = apply
            self.failed = failed
        }

        private static let ids = Atomic<UInt64>(0)
    }

    // MARK: DeliveryOutbox

    public func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void
    ) {
        // Made again after a connection closed under it, the insert may find its rows already
        // committed: then it hands them over as if it had made them, so none is left undelivered.
        let tried = Atomic(false)
        let fencing = self.fencing
        submit(
            Write(
                apply: { connection, logger in
                    let again = tried.exchange(true, ordering: .relaxed)
                    // The lease's epoch when the write is made, not when it was handed over:
                    // a write kept through a lost connection goes in under the epoch this
                    // instance leads by then, or is refused when another instance took over:
                    // its standby evaluation holds the event, and the event is handed back to this
                    // instance's evaluator too (`StoreFencing.takenOver`, Docs/postgres.md#the-fence).
                    let fence = fencing.fence(of: delivery, sinks: sinks)
                    guard let fence else {
                        let rows = try await Self.insert(
                            delivery, sinks: sinks, urgent: urgent, now: now, connection, logger, existing: again)
                        return { committed(.success(rows)) }
                    }
                    let (rows, refused) = try await Self.fencedInsert(
                        delivery, sinks: sinks, urgent: urgent, now: now, fence, existing: again, fencing,
                        connection, logger)
                    return {
                        if let (alert, lost) = refused { fencing.takenOver([alert], lost) }
                        committed(.success(rows))
                    }
                }, failed: { committed(.failure($0)) }))
    }

    public func record(
        _ ids: [Int64], _ outcome: OutboxOutcome,
        committed: @escaping @Sendable (RecordedOutcome) -> Void,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        var write = Write(
            apply: { connection, logger in
                let recorded = try await Self.apply(outcome, to: ids, owner: self.owner, connection, logger)
                return { committed(recorded) }
            }, failed: failed)
        if case .delivered = outcome { write.delivered = (ids, { committed(RecordedOutcome()) }) }
        submit(write)
    }

    public func deadLetter(
        _ delivery: Delivery, sink: String, reason: String, now: Int64,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        submit(
            Write(
                apply: { connection, logger in
                    try await Self.insertDead(delivery, sink: sink, reason: reason, now: now, connection, logger)
                    return {}
                }, failed: failed))
    }

    public func commit() async {
        _ = try? await queue.perform { [self] connection, attempt in
            if let lost = await retryUnwritten(connection, attempt) { throw lost }
        }
    }

    public func loadPending() async throws -> [OutboxEntry] {
        try await pending()
    }

    public func countPending() async throws -> Int {
        try await depth()
    }

    public func reason(_ error: any Error) -> String {
        PostgresStoreError.reason(error, password: queue.url.password)
    }

    /// Hands `write` over at once, so writes keep the order they were handed over in.
    ///
    /// Group commit: the writes handed over while the queue is busy wait together, and the job
    /// that takes them makes them all in one transaction (one flush to disk for many outcomes,
    /// as SQLite's outbox does). The job is in the queue from the first of them on, so each
    /// write is made before any job handed over after it. A group that meets a dropped
    /// connection is run again whole on the next one when the queue reconnects; one that fails
    /// otherwise is made again write by write, so only the write at fault is reported and kept
    /// for the next try.
    func submit(_ write: Write) {
        let first = grouped.withLock { group -> Bool in
            group.writes.append(write)
            defer { group.scheduled = true }
            return !group.scheduled
        }
        guard first else { return }
        // The writes this job makes, taken when it first runs and kept for a run again.
        let taken = Mutex<[Write]?>(nil)
        let accepted = queue.submit { [self] connection, attempt in
            let writes = taken.withLock { taken in
                if taken == nil {
                    taken = grouped.withLock { group in
                        defer { group = ([], false) }
                        return group.writes
                    }
                }
                return taken ?? []
            }
            switch connection {
            case .failure(let error):
                attempt.complete {
                    unwritten.withLock { $0 += writes }
                    for write in writes { write.failed(error) }
                }
                return .done
            case .success(let connection):
                if let lost = await retryUnwritten(connection, attempt) { return .connectionLost(lost) }
                return await run(writes, connection, attempt)
            }
        }
        if !accepted {
            let writes = grouped.withLock { group in
                defer { group = ([], false) }
                return group.writes
            }
            for write in writes { write.failed(OutboxClosed()) }
        }
    }

    /// Makes `writes` in one transaction; when that fails but the connection stands, makes them
    /// again in one transaction with a savepoint around each, so that only a write that fails
    /// is rolled back (and reported and kept); should that transaction fail too, one by one,
    /// each in a transaction of its own. Whatever they hand over is handed over once, when the
    /// last is made (`Attempt.complete`): completing the attempt frees the connection for the
    /// next job, which would otherwise run inside a later write's transaction and be undone by
    /// its rollback (a claim's leases with it, so the claimed rows could be claimed and sent
    /// again).
    private func run(_ writes: [Write], _ connection: PostgresConnection, _ attempt: Attempt) async -> PostgresQueue.Ran
    {
        let logger = queue.logger
        if writes.count == 1 { return await run(writes[0], connection, attempt) }
        do {
            let done = try await PostgresQueue.write(connection, logger) { connection in
                var done: [@Sendable () -> Void] = []
                var rest = writes[...]
                while let write = rest.first {
                    // Deliveries recorded one after another: one statement for all their rows.
                    let delivered = rest.prefix { $0.delivered != nil }.compactMap(\.delivered)
                    if delivered.count > 1 {
                        try await Self.remove(from: "outbox", ids: delivered.flatMap(\.ids), connection, logger)
                        done += delivered.map(\.committed)
                        rest = rest.dropFirst(delivered.count)
                    } else {
                        done.append(try await write.apply(connection, logger))
                        rest = rest.dropFirst()
                    }
                }
                return done
            }
            attempt.complete { for call in done { call() } }
            return .done
        } catch {
            if queue.reconnects, PostgresQueue.isConnectionLoss(error, on: connection) { return .connectionLost(error) }
        }
        // Again in one transaction (one flush to disk, so the queue is not held long), each
        // write behind a savepoint: one that fails is rolled back alone, reported and kept.
        do {
            let handOver = try await PostgresQueue.write(connection, logger) { connection in
                var handOver: [@Sendable () -> Void] = []
                for write in writes {
                    try await connection.query("SAVEPOINT write", logger: logger)
                    do {
                        handOver.append(try await write.apply(connection, logger))
                    } catch {
                        if PostgresQueue.isConnectionLoss(error, on: connection) { throw error }
                        try await connection.query("ROLLBACK TO SAVEPOINT write", logger: logger)
                        handOver.append(keep(write, failed: error))
                    }
                    try await connection.query("RELEASE SAVEPOINT write", logger: logger)
                }
                return handOver
            }
            attempt.complete { for call in handOver { call() } }
            return .done
        } catch {
            if queue.reconnects, PostgresQueue.isConnectionLoss(error, on: connection) { return .connectionLost(error) }
        }
        var handOver: [@Sendable () -> Void] = []
        for write in writes {
            switch await make(write, connection) {
            case .success(let done): handOver.append(done)
            case .failure(let error):
                if queue.reconnects, PostgresQueue.isConnectionLoss(error, on: connection) {
                    return .connectionLost(error)
                }
                handOver.append(keep(write, failed: error))
            }
        }
        attempt.complete { for call in handOver { call() } }
        return .done
    }

    /// Makes `write` in one transaction; on failure reports it and keeps it for the next try,
    /// unless the connection dropped and the queue reconnects (then it runs again).
    private func run(_ write: Write, _ connection: PostgresConnection, _ attempt: Attempt) async -> PostgresQueue.Ran {
        switch await make(write, connection) {
        case .success(let done):
            attempt.complete { done() }
        case .failure(let error):
            if queue.reconnects, PostgresQueue.isConnectionLoss(error, on: connection) { return .connectionLost(error) }
            attempt.complete(keep(write, failed: error))
        }
        return .done
    }

    /// What a write that failed hands over: it is kept for the next try, and reported.
    private func keep(_ write: Write, failed error: any Error) -> @Sendable () -> Void {
        {
            self.unwritten.withLock { $0.append(write) }
            write.failed(error)
        }
    }

    /// Makes `write` in one transaction; returns what it hands over once committed, or why it
    /// failed. Hands nothing over itself.
    private func make(
        _ write: Write, _ connection: PostgresConnection
    ) async -> Result<@Sendable () -> Void, any Error> {
        let logger = queue.logger
        do {
            return .success(try await PostgresQueue.write(connection, logger) { try await write.apply($0, logger) })
        } catch {
            return .failure(error)
        }
    }

    /// Tries the writes that failed before, in their order; stops at the first that fails again.
    /// Returns the error when it was the connection that failed.
    private func retryUnwritten(_ connection: PostgresConnection, _ attempt: Attempt) async -> (any Error)? {
        let logger = queue.logger
        while let next = unwritten.withLock({ $0.first }) {
            do {
                let done = try await PostgresQueue.write(connection, logger) { try await next.apply($0, logger) }
                let handed = attempt.effect {
                    unwritten.withLock { $0.removeAll { $0.id == next.id } }
                    done()
                }
                if !handed { return ConnectionClosed() }
            } catch {
                return PostgresQueue.isConnectionLoss(error, on: connection) ? error : nil
            }
        }
        return nil
    }

    /// Runs `body` in one transaction together with the writes that failed before (first, in
    /// their order), so that what `body` writes (the engine's state) never commits without
    /// them: outbox before state, in one commit. On failure they are kept for the next try.
    func afterUnwritten<T>(
        _ connection: PostgresConnection, _ attempt: Attempt, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = queue.logger
        let earlier = unwritten.withLock { $0 }
        let (done, value) = try await PostgresQueue.write(connection, logger) { connection in
            var done: [@Sendable () -> Void] = []
            for write in earlier { done.append(try await write.apply(connection, logger)) }
            return (done, try await body(connection))
        }
        let handed = attempt.effect {
            let made = Set(earlier.map(\.id))
            unwritten.withLock { $0.removeAll { made.contains($0.id) } }
            for call in done { call() }
        }
        if !handed { throw ConnectionClosed() }
        return value
    }

    // MARK: Claims and leases (SharedOutbox)

    public func claim(sink: String, limit: Int, now: Int64) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        return try await claim(sink: sink, owner: owner, now: now, lease: claimLease, limit: limit)
    }

    public func renew(_ ids: [Int64], now: Int64) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try await queue.perform { connection in
            let rows = try await connection.query(
                """
                UPDATE outbox SET locked_until = \(now + self.claimLease)
                WHERE id = ANY(\(ids)) AND locked_by = \(self.owner)
                RETURNING id
                """, logger: self.queue.logger)
            var renewed: Set<Int64> = []
            for try await id in rows.decode(Int64.self) { renewed.insert(id) }
            return renewed
        }
    }

    public func release(_ ids: [Int64]) async throws {
        try await queue.perform { connection in
            _ = try await connection.query(
                "UPDATE outbox SET locked_by = NULL, locked_until = NULL WHERE id = ANY(\(ids)) AND locked_by = \(self.owner)",
                logger: self.queue.logger)
        }
    }

    public func pendingBySink() async throws -> [String: Int] {
        try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT sink, COUNT(*) FROM outbox GROUP BY sink", logger: self.queue.logger)
            var counts: [String: Int] = [:]
            for try await (sink, count) in rows.decode((String, Int).self) { counts[sink] = count }
            return counts
        }
    }

    public func beginAttempt(sink: String, rate: RateSpec) async throws -> SharedStart {
        let (decision, clock) = try await PostgresSinkRates(queue).beginTimed(
            sink: sink, rate: rate, lease: Self.rateLease)
        switch decision {
        case .start(let at): return .start(at)
        case .wait(let until): return .wait(millis: until == .max ? nil : max(1, until - clock))
        }
    }

    public func settleAttempt(sink: String, rate: RateSpec, started: Int64) async throws {
        try await PostgresSinkRates(queue).settle(sink: sink, rate: rate, started: started)
    }

    public func cancelAttempt(sink: String, rate: RateSpec, started: Int64) async throws {
        try await PostgresSinkRates(queue).cancel(sink: sink, rate: rate, started: started)
    }

    /// Takes up to `limit` rows of `sink` that are due at `now` and not leased by anyone, most
    /// urgent first then oldest, and leases them to `owner` until `now + lease` (ms). Rows
    /// another transaction is claiming at the same moment are skipped, not waited for.
    ///
    /// One statement, so one round trip and atomic without a transaction around it: it leases
    /// the rows (`claimFunction`) and returns them joined with their alerts, a result row per
    /// (outbox row, alert in its list, in the list's order). A row that names no stored alert
    /// (the tables were changed by hand) fails the claim, and the claim's rows are let go at once.
    public func claim(sink: String, owner: String, now: Int64, lease: Int64, limit: Int) async throws -> [OutboxEntry] {
        let logger = queue.logger
        return try await queue.perform { connection in
            let rows = try await connection.query(
                """
                WITH claimed AS (SELECT * FROM claim_outbox(\(sink), \(owner), \(now), \(now + lease), \(Int64(limit))))
                SELECT c.id, c.sink, c.delivery_id, c.digest, c.held, c.urgent, c.created_at, c.attempts,
                  c.next_attempt_at, c.last_error, \(unescaped: Self.alertColumns(id: "a.id"))
                FROM claimed c
                LEFT JOIN LATERAL unnest(string_to_array(c.alerts, E'\\n')) WITH ORDINALITY AS listed(name, place) ON TRUE
                LEFT JOIN alerts a ON a.id = listed.name
                ORDER BY c.urgent DESC, c.id, listed.place
                """, logger: logger)
            typealias Columns = (
                Int64, String, String, Bool, Bool, Bool, Int64, Int64, Int64, String?,
                String?, String?, String?, Int64?, Double?, String?, Double?, Double?, Bool?, Double?, String?, String?,
                String?, Int64?, String?
            )
            var read: [(row: Columns, events: [Alert])] = []
            for try await row in rows.decode(Columns.self) {
                if read.last?.row.0 != row.0 { read.append((row, [])) }
                if let alert = Self.joinedAlert(
                    (
                        row.10, row.11, row.12, row.13, row.14, row.15, row.16, row.17, row.18, row.19, row.20, row.21,
                        row.22, row.23, row.24
                    ))
                {
                    read[read.count - 1].events.append(alert)
                }
            }
            if let broken = read.first(where: { $0.events.isEmpty }) {
                let ids = read.map(\.row.0)
                _ = try await connection.query(
                    "UPDATE outbox SET locked_by = NULL, locked_until = NULL WHERE id = ANY(\(ids)) AND locked_by = \(owner)",
                    logger: logger)
                throw MissingAlerts(table: "outbox", row: broken.row.0)
            }
            return read.map { row, events in
                OutboxEntry(
                    id: row.0, sink: row.1,
                    delivery: Self.delivery(id: row.2, sink: row.1, digest: row.3, held: row.4, events),
                    urgent: row.5, createdAt: row.6, attempts: Int(row.7), nextAttemptAt: row.8, lastError: row.9)
            }
        }
    }

    /// `claim_outbox(sink, owner, now, until, limit)`: leases to `owner` until `until` up to
    /// `limit` rows of `sink` that are due at `now` and not leased by anyone, most urgent first
    /// then oldest, and returns them. `FOR UPDATE SKIP LOCKED`: rows another transaction is
    /// claiming at the same moment are skipped, not waited for.
    ///
    /// It walks the index `outbox_claim`, which holds a sink's rows in that order, and stops at
    /// the rows it takes, so a claim costs the rows it takes plus those before them that are
    /// leased or not due, however many wait behind. The planner is told to (sorts, sequential
    /// and bitmap scans off for this one statement): from its statistics of a table whose rows
    /// come and go by the thousand it often judges that few rows are due and reads and sorts
    /// every due row for each claim instead.
    static let claimFunction = """
        CREATE FUNCTION claim_outbox(claim_sink TEXT, claim_owner TEXT, claim_now BIGINT, claim_until BIGINT,
          claim_limit BIGINT)
        RETURNS SETOF outbox LANGUAGE sql VOLATILE
        SET enable_sort = off SET enable_seqscan = off SET enable_bitmapscan = off
        AS $$
          UPDATE outbox SET locked_by = claim_owner, locked_until = claim_until
          WHERE id IN (
            SELECT id FROM outbox
            WHERE sink = claim_sink AND next_attempt_at <= claim_now
              AND (locked_until IS NULL OR locked_until <= claim_now)
            ORDER BY urgent DESC, id LIMIT claim_limit FOR UPDATE SKIP LOCKED)
          RETURNING *
        $$
        """

    // MARK: One transaction each, for commands and tests

    /// Writes one row per sink for `delivery`; a (delivery id, sink) already pending is left as
    /// it is and not returned, so enqueueing twice never delivers twice.
    @discardableResult
    public func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool = false, now: Int64
    ) async throws
        -> [OutboxEntry]
    {
        return try await queue.transaction { connection in
            try await Self.insert(delivery, sinks: sinks, urgent: urgent, now: now, connection, self.queue.logger)
        }
    }

    /// Writes one row per sink for each of `deliveries`, in one transaction (for a store filled
    /// at once: benchmarks, copies); returns the rows made.
    @discardableResult
    public func enqueue(all deliveries: [Delivery], sinks: [String], now: Int64) async throws -> [OutboxEntry] {
        return try await queue.transaction { connection in
            var rows: [OutboxEntry] = []
            for delivery in deliveries {
                rows += try await Self.insert(
                    delivery, sinks: sinks, urgent: false, now: now, connection, self.queue.logger)
            }
            return rows
        }
    }

    /// Writes one attempt's outcome for the rows `ids`; returns the rows a fallback got.
    @discardableResult
    public func record(_ ids: [Int64], _ outcome: OutboxOutcome) async throws -> [OutboxEntry] {
        return try await queue.transaction { connection in
            try await Self.apply(outcome, to: ids, owner: self.owner, connection, self.queue.logger).moved
        }
    }

    /// Makes every pending row due at `now` and ends its lease (for `outbox flush`).
    public func makeAllDue(now: Int64) async throws {
        try await queue.perform { connection in
            _ = try await connection.query(
                "UPDATE outbox SET next_attempt_at = \(now), locked_by = NULL, locked_until = NULL",
                logger: self.queue.logger)
        }
    }

    public func pendingSinks() async throws -> [String] {
        try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT DISTINCT sink FROM outbox ORDER BY sink", logger: self.queue.logger)
            var sinks: [String] = []
            for try await sink in rows.decode(String.self) { sinks.append(sink) }
            return sinks
        }
    }

    /// Every pending row, in insertion order.
    public func pending() async throws -> [OutboxEntry] {
        return try await queue.perform { connection in
            try await Self.entries(connection, self.queue.logger, table: "outbox", ids: nil)
        }
    }

    /// Every dead letter, oldest first.
    public func dead() async throws -> [OutboxEntry] {
        return try await queue.perform { connection in
            try await Self.entries(connection, self.queue.logger, table: "dead_letters", ids: nil)
        }
    }

    /// Pending rows (optionally of one sink).
    public func depth(sink: String? = nil) async throws -> Int {
        return try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT COUNT(*) FROM outbox WHERE \(sink)::TEXT IS NULL OR sink = \(sink)", logger: self.queue.logger)
            var count = 0
            for try await value in rows.decode(Int.self) { count = value }
            return count
        }
    }

    /// Deletes dead letters (`dead`), or dead letters and pending rows (`all`); returns how many
    /// rows went.
    @discardableResult
    public func purge(dead: Bool, all: Bool) async throws -> Int {
        return try await queue.transaction { connection in
            var count = 0
            if dead || all {
                count += try await Self.remove(from: "dead_letters", ids: nil, connection, self.queue.logger)
            }
            if all { count += try await Self.remove(from: "outbox", ids: nil, connection, self.queue.logger) }
            return count
        }
    }

    // MARK: The statements

    /// With `existing`, a (delivery, sink) row already pending is returned too (without
    /// counting its alerts again): for a write made again after its connection closed.
    static func insert(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        _ connection: PostgresConnection, _ logger: Logger, existing: Bool = false
    ) async throws -> [OutboxEntry] {
        let (id, alerts, isDigest) = (delivery.id, OutboxColumns.alertList(delivery), OutboxColumns.isDigest(delivery))
        var rows: [OutboxEntry] = []
        var found: [OutboxEntry] = []
        for sink in sinks {
            let inserted = try await connection.query(
                """
                INSERT INTO outbox (sink, delivery_id, alerts, digest, held, urgent, created_at, attempts, next_attempt_at)
                VALUES (\(sink), \(id), \(alerts), \(isDigest), \(delivery.held), \(urgent), \(now), 0, \(now))
                ON CONFLICT (delivery_id, sink) DO NOTHING RETURNING id
                """, logger: logger)
            var made = false
            for try await rowID in inserted.decode(Int64.self) {
                made = true
                rows.append(
                    OutboxEntry(
                        id: rowID, sink: sink, delivery: delivery, urgent: urgent, createdAt: now, nextAttemptAt: now))
            }
            guard existing, !made else { continue }
            let there = try await connection.query(
                "SELECT id FROM outbox WHERE delivery_id = \(id) AND sink = \(sink)", logger: logger)
            for try await rowID in there.decode(Int64.self) {
                found.append(
                    OutboxEntry(
                        id: rowID, sink: sink, delivery: delivery, urgent: urgent, createdAt: now, nextAttemptAt: now))
            }
        }
        if !rows.isEmpty { try await store(delivery.events, references: rows.count, connection, logger) }
        return rows + found
    }

    /// Stores each alert once, counting `references` more rows that name it.
    private static func store(
        _ alerts: [Alert], references: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        for alert in alerts {
            let (low, high) = OutboxColumns.threshold(alert.threshold)
            let isNull = alert.threshold == .none
            let notify = alert.notify.joined(separator: "\n")
            try await connection.query(
                """
                INSERT INTO alerts (id, refs, rule, symbol, time, price, condition, threshold_low, threshold_high,
                  threshold_null, value, message, notify, kind, reminder, source)
                VALUES (\(alert.id), \(Int64(references)), \(alert.rule), \(alert.symbol), \(alert.time), \(alert.price),
                  \(alert.condition), \(low), \(high), \(isNull), \(alert.value), \(alert.message), \(notify),
                  \(alert.kind.rawValue), \(alert.reminder.map(Int64.init)), \(alert.source))
                ON CONFLICT (id) DO UPDATE SET refs = alerts.refs + excluded.refs
                """, logger: logger)
        }
    }

    /// Deletes the rows `ids` of `table` (`outbox` or `dead_letters`; every row when nil) and
    /// counts one row fewer naming each alert they name; an alert no row names any more is
    /// deleted. Two statements however many rows go (inside the caller's transaction, which
    /// makes them one change); returns how many rows went.
    ///
    /// The count goes down with `refs = refs - n` on the row's newest version, so two
    /// transactions releasing one alert at once (its rows for two sinks, delivered by two
    /// processes) both count: the second waits for the first's row lock and subtracts from
    /// what it committed.
    @discardableResult
    private static func remove(
        from table: String, ids: [Int64]?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Int {
        let rows = try await connection.query(
            """
            WITH gone AS (
              DELETE FROM \(unescaped: table) WHERE \(ids)::BIGINT[] IS NULL OR id = ANY(\(ids)) RETURNING alerts),
            named AS (
              SELECT name, COUNT(*) AS n FROM gone, unnest(string_to_array(gone.alerts, E'\\n')) AS name
              WHERE name <> '' GROUP BY name),
            released AS (
              UPDATE alerts SET refs = alerts.refs - named.n FROM named WHERE alerts.id = named.name
              RETURNING alerts.id, alerts.refs)
            SELECT (SELECT COUNT(*) FROM gone), ARRAY(SELECT id FROM released WHERE refs <= 0)
            """, logger: logger)
        var (count, unnamed) = (0, [String]())
        for try await (gone, ids) in rows.decode((Int, [String]).self) { (count, unnamed) = (gone, ids) }
        if !unnamed.isEmpty {
            try await connection.query("DELETE FROM alerts WHERE id = ANY(\(unnamed)) AND refs <= 0", logger: logger)
        }
        return count
    }

    /// A retry or a dead letter by `owner` leaves a row another deliverer has claimed since
    /// (`owner`'s claim ran out while it was held up): that deliverer's attempt decides, the
    /// row is not handed out a third time while it is in flight, and a row it sends is never
    /// also a dead letter. A delivery is recorded whoever holds the row: the send happened,
    /// and the other deliverer's outcome then finds no row to retry or dead-letter.
    private static func apply(
        _ outcome: OutboxOutcome, to ids: [Int64], owner: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> RecordedOutcome {
        switch outcome {
        case .delivered:
            try await remove(from: "outbox", ids: ids, connection, logger)
            return RecordedOutcome()
        case .retry(let at, let reason):
            try await connection.query(
                """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = \(at), last_error = \(reason),
                  locked_by = NULL, locked_until = NULL
                WHERE id = ANY(\(ids)) AND (locked_by IS NULL OR locked_by = \(owner))
                """, logger: logger)
            return RecordedOutcome()
        case .dead(let reason, let lastError, let at, let fallback):
            var recorded = RecordedOutcome()
            let ours = try await connection.query(
                """
                SELECT id FROM outbox WHERE id = ANY(\(ids)) AND (locked_by IS NULL OR locked_by = \(owner))
                ORDER BY id FOR UPDATE
                """, logger: logger)
            var free: [Int64] = []
            for try await id in ours.decode(Int64.self) { free.append(id) }
            for id in free {
                guard let row = try await entries(connection, logger, table: "outbox", ids: [id]).first else {
                    continue
                }
                recorded.deadLetters += 1
                try await connection.query(
                    """
                    INSERT INTO dead_letters (sink, delivery_id, alerts, digest, held, urgent, created_at, attempts,
                      last_error, reason, died_at)
                    SELECT sink, delivery_id, alerts, digest, held, urgent, created_at, attempts + 1, \(lastError),
                      \(reason), \(at)
                    FROM outbox WHERE id = \(id)
                    """, logger: logger)
                try await connection.query("DELETE FROM outbox WHERE id = \(id)", logger: logger)
                // The alerts stay: the dead letter names them. A fallback row names them once more.
                if let fallback {
                    recorded.moved += try await insert(
                        row.delivery, sinks: [fallback], urgent: row.urgent, now: at, connection, logger)
                }
            }
            return recorded
        }
    }

    /// A dead letter for `delivery` on `sink` that never had a row there (`attempts` 1, dying
    /// at `now`), or, from `store copy`, one as a state folder kept it (`copied`).
    static func insertDead(
        _ delivery: Delivery, sink: String, reason: String, now: Int64,
        _ connection: PostgresConnection, _ logger: Logger, copied: OutboxEntry? = nil
    ) async throws {
        let (urgent, createdAt) = (copied?.urgent ?? false, copied?.createdAt ?? now)
        let (attempts, lastError) = (Int64(copied?.attempts ?? 1), copied.map(\.lastError) ?? reason)
        try await connection.query(
            """
            INSERT INTO dead_letters (sink, delivery_id, alerts, digest, held, urgent, created_at, attempts,
              last_error, reason, died_at)
            VALUES (\(sink), \(delivery.id), \(OutboxColumns.alertList(delivery)), \(OutboxColumns.isDigest(delivery)), \(delivery.held), \(urgent),
              \(createdAt), \(attempts), \(lastError), \(reason), \(now))
            """, logger: logger)
        try await store(delivery.events, references: 1, connection, logger)
    }

    /// The rows of `table` (`outbox` or `dead_letters`) in id order (only `ids` when given),
    /// with their alerts read from `alerts`. The rows and their alerts are two reads: a row
    /// deleted between them (delivered by another process meanwhile, its alerts released) is
    /// left out; a row still there whose alerts are missing throws `MissingAlerts`.
    static func entries(
        _ connection: PostgresConnection, _ logger: Logger, table: String, ids: [Int64]?
    ) async throws -> [OutboxEntry] {
        let dead = table == "dead_letters"
        let time = dead ? "died_at" : "next_attempt_at"
        let reason = dead ? "reason" : "NULL::TEXT"
        let rows = try await connection.query(
            """
            SELECT id, sink, delivery_id, alerts, digest, held, urgent, created_at, attempts, \(unescaped: time),
              last_error, \(unescaped: reason)
            FROM \(unescaped: table) WHERE \(ids)::BIGINT[] IS NULL OR id = ANY(\(ids)) ORDER BY id
            """, logger: logger)
        typealias Columns = (Int64, String, String, String, Bool, Bool, Bool, Int64, Int64, Int64, String?, String?)
        var read: [Columns] = []
        for try await row in rows.decode(Columns.self) { read.append(row) }
        var alerts: [String: Alert] = [:]
        let wanted = Array(Set(read.flatMap { OutboxColumns.split($0.3) }))
        if !wanted.isEmpty {
            let found = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(alertColumns(id: "id")) FROM alerts WHERE id = ANY($1)",
                    binds: {
                        var binds = PostgresBindings()
                        binds.append(wanted)
                        return binds
                    }()), logger: logger)
            for try await row in found.decode(AlertColumns.self) { alerts[row.0] = alert(row) }
        }
        let incomplete = read.filter { row in !OutboxColumns.split(row.3).contains { alerts[$0] != nil } }.map(\.0)
        var gone: Set<Int64> = []
        if !incomplete.isEmpty {
            let there = try await connection.query(
                "SELECT id FROM \(unescaped: table) WHERE id = ANY(\(incomplete))", logger: logger)
            var still: Set<Int64> = []
            for try await id in there.decode(Int64.self) { still.insert(id) }
            if let missing = incomplete.first(where: still.contains) { throw MissingAlerts(table: table, row: missing) }
            gone = Set(incomplete)
        }
        return read.filter { !gone.contains($0.0) }.map { row in
            let events = OutboxColumns.split(row.3).compactMap { alerts[$0] }
            return OutboxEntry(
                id: row.0, sink: row.1, delivery: delivery(id: row.2, sink: row.1, digest: row.4, held: row.5, events),
                urgent: row.6, createdAt: row.7, attempts: Int(row.8), nextAttemptAt: row.9, lastError: row.10,
                deadReason: row.11)
        }
    }

    /// The delivery a row of `sink` keeps: its first event, or a digest of `events` (at least
    /// one) with the id `id`.
    private static func delivery(id: String, sink: String, digest: Bool, held: Bool, _ events: [Alert]) -> Delivery {
        digest
            ? .digest(Digest(sink: digestSink(id, first: events[0].id) ?? sink, events: events, held: held))
            : .event(events[0])
    }

    /// An alert's columns as `alertColumns` selects them.
    typealias AlertColumns = (
        String, String, String, Int64, Double, String, Double, Double?, Bool, Double, String, String, String, Int64?,
        String?
    )

    /// The columns an alert is stored in (`alerts`, `policy_pending`), its id's column named `id`.
    static func alertColumns(id: String) -> String {
        "\(id), rule, symbol, time, price, condition, threshold_low, threshold_high, threshold_null, value, message, "
            + "notify, kind, reminder, source"
    }

    /// An alert's columns from an outer join: all nil when no alert was found.
    typealias JoinedAlertColumns = (
        String?, String?, String?, Int64?, Double?, String?, Double?, Double?, Bool?, Double?, String?, String?,
        String?, Int64?, String?
    )

    /// The alert an outer join found (nil when it found none).
    static func joinedAlert(_ row: JoinedAlertColumns) -> Alert? {
        guard let id = row.0, let rule = row.1, let symbol = row.2, let time = row.3, let price = row.4,
            let condition = row.5, let low = row.6, let isNull = row.8, let value = row.9, let message = row.10,
            let notify = row.11, let kind = row.12
        else { return nil }
        return alert(
            (id, rule, symbol, time, price, condition, low, row.7, isNull, value, message, notify, kind, row.13, row.14)
        )
    }

    /// The alert `alertColumns` stored, with its id.
    static func alert(_ row: AlertColumns) -> Alert {
        let threshold: Threshold =
            if row.8 { .none } else if let high = row.7 { .range(row.6, high) } else { .value(row.6) }
        var alert = Alert(
            rule: row.1, symbol: row.2, time: row.3, price: row.4, condition: row.5, threshold: threshold,
            value: row.9, message: row.10,
            notify: row.11.isEmpty ? [] : row.11.split(separator: "\n").map(String.init),
            kind: AlertKind(rawValue: row.12) ?? .alert, reminder: row.13.map(Int.init))
        alert.source = row.14
        alert.adoptOccurrence(fromID: row.0)
        return alert
    }

    /// The sink a digest was made for, read from its id `digest:SINK:<first event id>`.
    private static func digestSink(_ id: String, first: String) -> String? {
        let prefix = "digest:", suffix = ":" + first
        guard id.hasPrefix(prefix), id.hasSuffix(suffix), id.count > prefix.count + suffix.count else { return nil }
        return String(id.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// A row names an alert that is not stored: the tables were changed by hand.
    struct MissingAlerts: Error, CustomStringConvertible {
        var table: String
        var row: Int64
        var description: String { "\(table) row \(row) names no stored alert" }
    }
}
