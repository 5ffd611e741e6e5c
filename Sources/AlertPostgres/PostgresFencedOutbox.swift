import AlertModel
import AlertOutbox
import AlertStore
import Logging
import PostgresNIO
import Synchronization

/// Whether this process's writes go under the fence (`run` with several instances): the
/// leases and their epochs, shared by the outbox and the engine state of one store. Unset, the
/// store writes unfenced, as a command (`outbox flush`, `store copy`) does.
final class StoreFencing: Sendable {
    private let leases = Mutex<(SourceLeases, instance: String, staged: Set<String>)?>(nil)
    private let handBack = Mutex<(@Sendable ([Alert], _ leaderEpoch: Int64?) -> Void)?>(nil)

    var current: SourceLeases? { leases.withLock { $0?.0 } }

    /// The sinks with quiet hours or a group, whose stages only the home lease's leader runs
    /// (Docs/postgres.md#digests-and-quiet-hours-across-instances).
    var staged: Set<String> { leases.withLock { $0?.staged ?? [] } }

    func use(
        _ leases: SourceLeases, instance: String, staged: Set<String>,
        refused: (@Sendable ([Alert], _ leaderEpoch: Int64?) -> Void)?
    ) {
        self.leases.withLock { $0 = (leases, instance, staged) }
        handBack.withLock { $0 = refused }
    }

    /// Events whose write was dropped because another instance leads their lease (`lost`), once
    /// the transaction that refused them committed: handed back to the evaluator. That instance
    /// enters them only if its standby kept them, and it did not when this one evaluated them
    /// as a leader that had lost the lease without knowing yet (a pause); the evaluator keeps
    /// them as a standby would, for its own next takeover (Docs/postgres.md#taking-over).
    func takenOver(_ alerts: [Alert], _ lost: LostLeadership) {
        guard !alerts.isEmpty, let handBack = handBack.withLock({ $0 }) else { return }
        handBack(alerts, lost.epoch)
    }

    /// What a write refused by the fence becomes. When another instance took the lease over,
    /// the write is dropped (nil; logged): that instance's standby evaluation holds what it
    /// carried and enters it, and an event it carried is handed back (`takenOver`). When the
    /// lease is still this instance's, or no one's (its own lease ran out while the database
    /// was away, or it was taken back under a new epoch not yet seen here), `AwaitingLease` is
    /// thrown: the write is kept and made again, so nothing is lost when this instance leads
    /// again.
    func refusal(_ lost: LostLeadership) -> AwaitingLease? {
        guard let instance = leases.withLock({ $0?.instance }), let holder = lost.holder, holder != instance else {
            return AwaitingLease(lost: lost)
        }
        return nil
    }

    /// The fence `lease` is written under now; epoch 0 (never a leader's: epochs start at 1)
    /// while this instance does not lead it, so the check refuses the write.
    static func fence(_ leases: SourceLeases, lease: String) -> PostgresFence {
        PostgresFence(source: lease, epoch: leases.epoch(of: lease) ?? 0)
    }

    /// The fence of `delivery` to `sinks`, or nil when unfenced: the home lease's when every
    /// sink has stages (only the stages' owner delivers to them), else its first event's
    /// source's lease.
    func fence(of delivery: Delivery, sinks: [String]) -> PostgresFence? {
        guard let (leases, _, staged) = leases.withLock({ $0 }) else { return nil }
        if !sinks.isEmpty, sinks.allSatisfy(staged.contains) { return Self.fence(leases, lease: leases.home) }
        return Self.fence(leases, lease: leases.lease(ofSource: delivery.events.first?.source))
    }
}

extension PostgresStore {
    /// From now on every outbox insert and engine-state save goes under the fence of the lease
    /// it belongs to (`leases`), with the outbox ledger: a write of a lease this instance does
    /// not lead under the epoch the store holds is refused whole and dropped (logged), since
    /// the lease's leader enters it (Docs/postgres.md#several-instances).
    /// `instance` is this process's id in `leadership`.
    /// `staged`: the sinks with quiet hours or a group; their stages run on the home lease's
    /// leader only, which enters what they deliver under its fence
    /// (Docs/postgres.md#digests-and-quiet-hours-across-instances).
    /// `refused`: given the events evaluated here whose write was dropped because another
    /// instance leads their lease, with that instance's epoch (`StoreFencing.takenOver`).
    public func fence(
        with leases: SourceLeases, instance: String, staged: Set<String> = [],
        refused: (@Sendable ([Alert], _ leaderEpoch: Int64?) -> Void)? = nil
    ) {
        fencing.use(leases, instance: instance, staged: staged, refused: refused)
    }
}

/// A write the fence refused while its lease was still this instance's or no one's: kept and
/// made again (`StoreFencing.refusal`).
public struct AwaitingLease: Error, Sendable, CustomStringConvertible {
    public var lost: LostLeadership

    public var description: String {
        "source \(lost.fence.source) is not led by this instance right now (its lease ran out or is being taken back); kept, and written once it leads the source again or dropped once another instance does"
    }
}

/// The outbox written by the leader of a source (Docs/postgres.md#several-instances): each
/// (delivery id, sink) is entered at most once, ever, while the ledger keeps it.
///
/// An outbox row is deleted once it is delivered, so the row alone cannot tell a new leader
/// that an event it evaluated again was sent already. `outbox_ledger` keeps every (delivery
/// id, sink) a leader entered, with the source and epoch it was entered under; a fenced insert
/// writes the ledger first, with `ON CONFLICT DO NOTHING`, and adds an outbox row only for the
/// sinks the ledger did not have. A new leader can so insert every event it evaluated since the
/// old leader's last committed save: those the old leader entered are skipped by their stable
/// ids, the others are added.
extension PostgresOutbox {
    /// In one transaction under `fence`: enters `delivery` for each of `sinks` not entered
    /// before and returns the rows made. Throws `LostLeadership`, writing nothing, when the
    /// fence's epoch no longer leads its source.
    @discardableResult
    public func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool = false, now: Int64, fence: PostgresFence
    ) async throws -> [OutboxEntry] {
        let logger = queue.logger
        return try await queue.transaction { connection in
            try await PostgresLeadership.check(fence, connection, logger)
            return try await Self.enterOnce(delivery, sinks: sinks, urgent: urgent, now: now, fence, connection, logger)
        }
    }

    /// The `DeliveryOutbox` insert under `fence`, in the write's transaction: refused by the
    /// fence, nothing is written and no row is handed on (`LostLeadership` logged), and an event
    /// of the evaluator (not a stage's delivery) is returned as `refused`, to be handed back
    /// once the transaction commits (`StoreFencing.takenOver`). `existing`: the write is made
    /// again after its connection closed, so rows it entered under this fence are handed on as
    /// if made now.
    static func fencedInsert(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64, _ fence: PostgresFence, existing: Bool,
        _ fencing: StoreFencing, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (rows: [OutboxEntry], refused: (Alert, LostLeadership)?) {
        let stages = fence.source == fencing.current?.home && sinks.allSatisfy(fencing.staged.contains)
        do {
            try await PostgresLeadership.check(fence, connection, logger)
        } catch let lost as LostLeadership {
            if let awaiting = fencing.refusal(lost) { throw awaiting }
            logger.warning("\(delivery.id) not entered in the outbox: \(lost)")
            guard !stages, case .event(let alert) = delivery else { return ([], nil) }
            return ([], (alert, lost))
        }
        let rows = try await enterOnce(
            delivery, sinks: sinks, urgent: urgent, now: now, fence, connection, logger, existing: existing)
        if stages {
            try await PostgresPolicyJournal.consume(delivery, sinks: sinks, fence, now: now, connection, logger)
        }
        return (rows, nil)
    }

    /// Inside a transaction that checked `fence` (`PostgresLeadership.write`): enters
    /// `delivery` for each of `sinks` the ledger does not hold yet, beside whatever else the
    /// transaction writes (the engine state the events came from).
    public static func enterOnce(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64, _ fence: PostgresFence,
        _ connection: PostgresConnection, _ logger: Logger, existing: Bool = false
    ) async throws -> [OutboxEntry] {
        let rows = try await connection.query(
            """
            INSERT INTO outbox_ledger (delivery_id, sink, source, epoch, enqueued_at)
            SELECT \(delivery.id), sink, \(fence.source), \(fence.epoch), \(now) FROM UNNEST(\(sinks)::TEXT[]) AS sink
            ON CONFLICT (delivery_id, sink) DO NOTHING RETURNING sink
            """, logger: logger)
        var fresh: Set<String> = []
        for try await sink in rows.decode(String.self) { fresh.insert(sink) }
        let wanted = sinks.filter(fresh.contains)
        let made =
            wanted.isEmpty
            ? [] : try await insert(delivery, sinks: wanted, urgent: urgent, now: now, connection, logger)
        let known = sinks.filter { !fresh.contains($0) }
        guard existing, !known.isEmpty else { return made }
        // Entered by this very write on a connection that closed before it heard the commit.
        let there = try await connection.query(
            """
            SELECT o.id, o.sink FROM outbox o JOIN outbox_ledger l ON l.delivery_id = o.delivery_id AND l.sink = o.sink
            WHERE o.delivery_id = \(delivery.id) AND o.sink = ANY(\(known)) AND l.source = \(fence.source)
              AND l.epoch = \(fence.epoch)
            """, logger: logger)
        var found: [OutboxEntry] = []
        for try await (id, sink) in there.decode((Int64, String).self) {
            found.append(
                OutboxEntry(id: id, sink: sink, delivery: delivery, urgent: urgent, createdAt: now, nextAttemptAt: now))
        }
        return made + found
    }

    /// At a takeover of `fence.source` (in one transaction under `fence`): the pending rows
    /// earlier leaders of the lease entered, and the pending rows no leader entered (an earlier
    /// single `run`, `store copy`), which the ledger now gives to this lease, so that exactly
    /// one leader delivers each. The caller hands them to its sink workers, which ignore rows
    /// they hold already.
    public func adopt(_ fence: PostgresFence, now: Int64) async throws -> [OutboxEntry] {
        let logger = queue.logger
        return try await queue.transaction { connection in
            try await PostgresLeadership.check(fence, connection, logger)
            try await connection.query(
                """
                INSERT INTO outbox_ledger (delivery_id, sink, source, epoch, enqueued_at)
                SELECT delivery_id, sink, \(fence.source), \(fence.epoch), \(now) FROM outbox
                ON CONFLICT (delivery_id, sink) DO NOTHING
                """, logger: logger)
            let rows = try await connection.query(
                """
                SELECT o.id FROM outbox o JOIN outbox_ledger l ON l.delivery_id = o.delivery_id AND l.sink = o.sink
                WHERE l.source = \(fence.source) AND l.epoch <= \(fence.epoch) ORDER BY o.id
                """, logger: logger)
            var ids: [Int64] = []
            for try await id in rows.decode(Int64.self) { ids.append(id) }
            return ids.isEmpty ? [] : try await Self.entries(connection, logger, table: "outbox", ids: ids)
        }
    }

    /// Deletes ledger entries made before `before` (epoch ms); returns how many went. Keep
    /// them longer than any gap a new leader may evaluate again (the time between two engine
    /// saves, plus the longest takeover), or an event entered before could be entered twice.
    @discardableResult
    public func pruneLedger(before: Int64) async throws -> Int {
        try await queue.perform { connection in
            let rows = try await connection.query(
                "DELETE FROM outbox_ledger WHERE enqueued_at < \(before) RETURNING 1", logger: self.queue.logger)
            var count = 0
            for try await _ in rows.decode(Int.self) { count += 1 }
            return count
        }
    }
}
