import AlertModel
import AlertStore
import Logging
import PostgresNIO

/// What the policy stages hold, in PostgreSQL (`policy_pending`), as
/// `AlertStore.PolicyStateStore` keeps it in SQLite: one row per (sink, held event) in `seq`
/// order. Changes are writes on the outbox's queue, so they commit in the order they were handed
/// over relative to the outbox's rows (a digest's row is in the outbox in the same or an earlier
/// transaction than the removal of its events here), and `PostgresOutbox.commit` waits for both.
///
/// Several instances write one table: a row is known by (sink, event id), and its `seq` comes
/// from the database's sequence when it is inserted, never from the writer, so two writers never
/// replace each other's rows, and every reader sees one order (the order rows were inserted in;
/// one writer's rows keep the order it handed them over in). `Pending.seq` given to `record` is
/// not stored; `load` returns the store's.
public final class PostgresPolicyJournal: PolicyJournal {
    let outbox: PostgresOutbox
    private let failing = FailingWrites()

    init(_ outbox: PostgresOutbox) {
        self.outbox = outbox
    }

    public func load() async throws -> [PolicyStateStore.Pending] {
        let logger = outbox.queue.logger
        return try await outbox.queue.perform { connection in try await Self.all(connection, logger) }
    }

    /// Every row in `seq` order, read from one snapshot of the table (the rows' alerts and their
    /// places are two queries: another instance's insert between them must not shift one
    /// against the other).
    static func all(_ connection: PostgresConnection, _ logger: Logger) async throws -> [PolicyStateStore.Pending] {
        try await PostgresQueue.write(connection, logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            return try await snapshot(connection, logger)
        }
    }

    private static func snapshot(
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [PolicyStateStore.Pending] {
        let columns = PostgresOutbox.alertColumns(id: "alert_id")
        let alerts = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT \(columns) FROM policy_pending ORDER BY seq"), logger: logger)
        var events: [Alert] = []
        for try await row in alerts.decode(PostgresOutbox.AlertColumns.self) {
            events.append(PostgresOutbox.alert(row))
        }
        let stages = try await connection.query(
            "SELECT seq, sink, quiet FROM policy_pending ORDER BY seq", logger: logger)
        var pending: [PolicyStateStore.Pending] = []
        for try await (seq, sink, quiet) in stages.decode((Int64, String, Bool?).self) {
            guard pending.count < events.count else { break }
            pending.append(PolicyStateStore.Pending(seq: seq, sink: sink, alert: events[pending.count], quiet: quiet))
        }
        return pending
    }

    public func record(added: [PolicyStateStore.Pending], removed: [(sink: String, eventID: String)]) {
        guard !added.isEmpty || !removed.isEmpty else { return }
        let token = failing.token()
        let fencing = outbox.fencing
        outbox.submit(
            PostgresOutbox.Write(
                apply: { connection, logger in
                    var (added, removed) = (added, removed)
                    var refused: [([Alert], LostLeadership)] = []
                    if let leases = fencing.current {
                        (added, removed, refused) = try await Self.fenced(
                            added, removed, leases, fencing, connection, logger)
                    }
                    for (sink, id) in removed {
                        try await connection.query(
                            "DELETE FROM policy_pending WHERE sink = \(sink) AND alert_id = \(id)", logger: logger)
                    }
                    try await Self.insert(added, skippingEntered: fencing.current != nil, connection, logger)
                    let handBack = refused
                    return {
                        self.failing.written(token)
                        for (alerts, lost) in handBack { fencing.takenOver(alerts, lost) }
                    }
                },
                failed: { error in self.failing.failed(token, reason: self.outbox.reason(error)) }))
    }

    /// Inside the write's transaction, on a shared store: a row is journalled under the fence of
    /// its event's source's lease (the leader of the source journals its events), a removal
    /// under the home lease's (the stages' owner removes what it delivered or dropped). What
    /// another instance leads now is dropped and logged: that instance journals its own events
    /// (its standby kept them), and an old owner must not remove rows a new owner still needs.
    /// A lease still this instance's or no one's throws `AwaitingLease`: the write is kept.
    /// The events not journalled are returned with the refusal, to be handed back once the
    /// transaction commits (`StoreFencing.takenOver`).
    static func fenced(
        _ added: [PolicyStateStore.Pending], _ removed: [(sink: String, eventID: String)], _ leases: SourceLeases,
        _ fencing: StoreFencing, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (
        [PolicyStateStore.Pending], [(sink: String, eventID: String)], refused: [([Alert], LostLeadership)]
    ) {
        let byLease = Dictionary(grouping: added) { leases.lease(ofSource: $0.alert.source) }
        var wanted = Set(byLease.keys)
        if !removed.isEmpty { wanted.insert(leases.home) }
        var led: Set<String> = []
        var refused: [([Alert], LostLeadership)] = []
        for lease in wanted.sorted() {
            do {
                try await PostgresLeadership.check(StoreFencing.fence(leases, lease: lease), connection, logger)
                led.insert(lease)
            } catch let lost as LostLeadership {
                if let awaiting = fencing.refusal(lost) { throw awaiting }
                let what =
                    lease == leases.home && !removed.isEmpty
                    ? "\(removed.count) held events not removed from the policy journal"
                    : "\(byLease[lease]?.count ?? 0) held events not journalled"
                logger.warning("\(what): \(lost)")
                // One row per (sink, event): each event once.
                var seen: Set<String> = []
                let events = (byLease[lease] ?? []).map(\.alert).filter { seen.insert($0.id).inserted }
                if !events.isEmpty { refused.append((events, lost)) }
            }
        }
        return (
            added.filter { led.contains(leases.lease(ofSource: $0.alert.source)) },
            led.contains(leases.home) ? removed : [], refused
        )
    }

    /// Inside the fenced transaction that enters `delivery` for `sinks` (sinks with stages, by
    /// their owner): its events leave the journal, and each (event, sink) goes in the outbox
    /// ledger, so that a leader that evaluates one of them again after a takeover does not
    /// journal it again (`insert(skippingEntered:)`): each event is delivered to a sink once,
    /// alone or in one digest.
    static func consume(
        _ delivery: Delivery, sinks: [String], _ fence: PostgresFence, now: Int64, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let ids = delivery.events.map(\.id)
        try await connection.query(
            """
            INSERT INTO outbox_ledger (delivery_id, sink, source, epoch, enqueued_at)
            SELECT id, sink, \(fence.source), \(fence.epoch), \(now)
            FROM UNNEST(\(ids)::TEXT[]) AS id CROSS JOIN UNNEST(\(sinks)::TEXT[]) AS sink
            ON CONFLICT (delivery_id, sink) DO NOTHING
            """, logger: logger)
        try await connection.query(
            "DELETE FROM policy_pending WHERE sink = ANY(\(sinks)) AND alert_id = ANY(\(ids))", logger: logger)
    }

    /// Writes `rows` in order, each numbered by the table's sequence. A row whose (sink, event) the
    /// table holds already is left as it is, in its place: it is the same event, entered
    /// earlier (by this instance, or by another leader before a takeover). `skippingEntered`
    /// (a shared store): a row whose (event, sink) the outbox ledger holds is not written, since
    /// its owner delivered it already (`consume`).
    static func insert(
        _ rows: [PolicyStateStore.Pending], skippingEntered: Bool = false, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        for row in rows {
            let alert = row.alert
            if skippingEntered {
                let entered = try await connection.query(
                    "SELECT 1 FROM outbox_ledger WHERE delivery_id = \(alert.id) AND sink = \(row.sink)",
                    logger: logger)
                var found = false
                for try await _ in entered.decode(Int.self) { found = true }
                if found { continue }
            }
            let (low, high) = OutboxColumns.threshold(alert.threshold)
            try await connection.query(
                """
                INSERT INTO policy_pending (sink, alert_id, rule, symbol, time, price, condition, threshold_low,
                  threshold_high, threshold_null, value, message, notify, kind, reminder, quiet, source)
                VALUES (\(row.sink), \(alert.id), \(alert.rule), \(alert.symbol), \(alert.time), \(alert.price),
                  \(alert.condition), \(low), \(high), \(alert.threshold == .none), \(alert.value), \(alert.message),
                  \(alert.notify.joined(separator: "\n")), \(alert.kind.rawValue), \(alert.reminder.map(Int64.init)),
                  \(row.quiet), \(alert.source))
                ON CONFLICT (sink, alert_id) DO NOTHING
                """, logger: logger)
        }
    }

    /// Schema step 5 (`PostgresMigrations.all`): `seq` from a sequence, (sink, event) the row's
    /// identity. The sequence starts past the rows a single instance numbered before.
    static let sharedOrder = [
        "CREATE SEQUENCE policy_pending_seq",
        "SELECT setval('policy_pending_seq', COALESCE((SELECT MAX(seq) FROM policy_pending), 0) + 1, false)",
        "ALTER TABLE policy_pending ALTER COLUMN seq SET DEFAULT nextval('policy_pending_seq')",
        "ALTER SEQUENCE policy_pending_seq OWNED BY policy_pending.seq",
        "ALTER TABLE policy_pending DROP CONSTRAINT policy_pending_pkey",
        "ALTER TABLE policy_pending DROP CONSTRAINT policy_pending_sink_alert_id_key",
        "ALTER TABLE policy_pending ADD PRIMARY KEY (sink, alert_id)",
        "CREATE UNIQUE INDEX policy_pending_order ON policy_pending (seq)"
    ]

    public var unwritten: String? { failing.reason }
}
