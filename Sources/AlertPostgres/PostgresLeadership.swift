import AlertStore
import Logging
import PostgresNIO

/// One leader per source among the pricealerts that share a store, with a fencing epoch
/// (Docs/postgres.md#several-instances).
///
/// Leadership is a lease row per source in `leadership`: its holder (an instance id), an epoch,
/// and the time the lease ends. Taking a source whose lease has ended adds one to its epoch, so
/// every takeover gives a new, larger epoch. A leader renews well before its lease ends; a
/// leader that stops renewing, whatever the reason (killed, paused with SIGSTOP, its connection
/// cut), loses the source to the first standby that asks once the lease has run out.
///
/// A lease keeps no one from writing: the fence does. Every write a leader makes goes through
/// `write(source:epoch:)`, which reads the source's row `FOR KEY SHARE` inside the write's own
/// transaction and rolls the whole transaction back with `LostLeadership` when the epoch is no
/// longer the writer's. A takeover locks the row `FOR UPDATE` first, so it waits for writes
/// under the old epoch that hold the row, and every write that starts after it sees the new
/// epoch: an old leader's writes either commit before the takeover, where the new leader reads
/// them, or not at all. A renewal (an update of no key) does not wait for them: a leader's long
/// write never makes it miss its own renewal.
///
/// Times are epoch milliseconds from the database server's clock (`clock_timestamp()`), one
/// clock for every host, so no host's clock skew moves a lease. Tests pass `now` instead.
public final class PostgresLeadership: Sendable {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    /// A source's lease as the store holds it.
    public struct Lease: Sendable, Equatable {
        public var source: String
        public var holder: String
        public var epoch: Int64
        public var acquiredAt: Int64
        public var until: Int64

        public var fence: PostgresFence { PostgresFence(source: source, epoch: epoch) }
    }

    /// How an instance that evaluates a source asks for its lease (`acquire`) and keeps it
    /// (`renew`): by when it has followed the source without a break, and since when it has
    /// been alive.
    public struct Following: Sendable, Equatable {
        /// Since when (the store's clock, epoch ms) this instance has evaluated the source's
        /// prices without a break; nil while it has none (not subscribed yet, or its feed
        /// dropped).
        public var since: Int64?
        /// Since when (the store's clock, epoch ms) this instance has written its heartbeat
        /// with no gap of a lease or more; nil: it counts as alive all along. An instance that
        /// was paused with the others (the whole host, or the database) finds every heartbeat
        /// old, its own too: it judges the others by their heartbeats only once it has been
        /// alive for a lease again, which gives each of them a lease to write one.
        public var aliveSince: Int64?

        public init(since: Int64?, aliveSince: Int64? = nil) {
            self.since = since
            self.aliveSince = aliveSince
        }
    }

    /// Takes `source` for `instance` until `now + ttl` when no one holds it or its lease has
    /// run out (the epoch then grows by one; a source never led starts at 1). Nil when another
    /// instance, or this one under an earlier epoch, holds a lease that has not run out: a
    /// restarted instance does not take back what its earlier self may still be writing under.
    ///
    /// With `following`, a lease that ran out is taken only by an instance that can enter what
    /// its last leader may have left:
    /// - one that has followed the source since before the last leader's last renewal (so it
    ///   evaluated every tick the leader may not have entered), when no other instance heard
    ///   from within `ttl` has followed it for longer;
    /// - one that follows the source when no other instance's heartbeat says it follows it
    ///   (the others said goodbye, or their feeds are down);
    /// - once it has been alive for `ttl` (`Following.aliveSince`): when no other instance
    ///   heard from within `ttl` has followed the source since before it (none could do
    ///   better), or once the lease has been over for `ttl` while it was alive (none of them
    ///   took it: their feeds are down too, or they started as late).
    ///
    /// A source never led is taken at once. So a killed instance started again at once leaves
    /// the takeover to a standby that saw the gap, and after a pause of the whole host no
    /// instance takes a lease before the others have had a lease to say they are alive
    /// (Docs/postgres.md#leadershipservice).
    public func acquire(
        source: String, instance: String, ttl: Int64, now: Int64? = nil, following: Following? = nil
    ) async throws -> Lease? {
        let cautious = following != nil
        let since = following?.since
        let alive = following?.aliveSince
        return try await queue.transaction { connection in
            let logger = self.queue.logger
            var at: Int64 = 0
            let clock = try await connection.query(
                "SELECT COALESCE(\(now)::BIGINT, \(unescaped: Self.serverClock))", logger: logger)
            for try await value in clock.decode(Int64.self) { at = value }
            // A lease that ran out at `at` is locked against the fenced writes still under its
            // epoch (`check`), and taken only once they ended; a running one is not touched.
            _ = try await connection.query(
                "SELECT 1 FROM leadership WHERE source = \(source) AND lease_until <= \(at) FOR UPDATE", logger: logger)
            let rows = try await connection.query(
                """
                WITH clock AS (SELECT \(at)::BIGINT AS now)
                INSERT INTO leadership (source, epoch, holder, acquired_at, renewed_at, lease_until)
                SELECT \(source), 1, \(instance), clock.now, clock.now, clock.now + \(ttl) FROM clock
                ON CONFLICT (source) DO UPDATE
                  SET epoch = leadership.epoch + 1, holder = excluded.holder, acquired_at = excluded.acquired_at,
                    renewed_at = excluded.renewed_at, lease_until = excluded.lease_until
                  WHERE leadership.lease_until <= excluded.acquired_at
                    AND (NOT \(cautious)
                      OR (\(since)::BIGINT <= leadership.renewed_at AND NOT EXISTS (
                        SELECT 1 FROM instances i, unnest(i.following, i.following_since) AS f(source, since)
                        WHERE i.id <> excluded.holder AND f.source = excluded.source
                          AND i.seen_at > excluded.acquired_at - \(ttl) AND f.since < \(since)::BIGINT))
                      OR (\(since)::BIGINT IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM instances i WHERE i.id <> excluded.holder AND excluded.source = ANY(i.following)))
                      OR (COALESCE(\(alive)::BIGINT, 0) <= excluded.acquired_at - \(ttl) AND (
                        GREATEST(leadership.lease_until, COALESCE(\(alive)::BIGINT, 0)) <= excluded.acquired_at - \(ttl)
                        OR NOT EXISTS (
                          SELECT 1 FROM instances i, unnest(i.following, i.following_since) AS f(source, since)
                          WHERE i.id <> excluded.holder AND f.source = excluded.source
                            AND i.seen_at > excluded.acquired_at - \(ttl)
                            AND (\(since)::BIGINT IS NULL OR f.since < \(since)::BIGINT)))))
                RETURNING epoch, acquired_at, lease_until
                """, logger: self.queue.logger)
            for try await (epoch, acquiredAt, until) in rows.decode((Int64, Int64, Int64).self) {
                return Lease(source: source, holder: instance, epoch: epoch, acquiredAt: acquiredAt, until: until)
            }
            return nil
        }
    }

    /// Extends `lease` to `now + ttl`. Nil when it is no longer held under its epoch (another
    /// instance took the source over): the caller is a standby from then on.
    ///
    /// With `following` (the holder's own), the holder hands the source over instead when
    /// another instance heard from within `ttl` has followed it since before the holder (or
    /// follows it while the holder does not): the lease ends now, as its last renewal, and the
    /// renewal gives nil, so that instance takes the source at its next try. That
    /// instance evaluated every tick the holder did since the holder's feed last came back, and
    /// the ticks the holder missed meanwhile, so a leader whose feed dropped (or that connected
    /// again after a pause later than a standby) never leaves those ticks unentered.
    public func renew(
        _ lease: Lease, ttl: Int64, now: Int64? = nil, following: Following? = nil
    ) async throws
        -> Lease?
    {
        let cautious = following != nil
        let since = following?.since
        return try await queue.perform { connection in
            let rows = try await connection.query(
                """
                WITH clock AS (SELECT COALESCE(\(now)::BIGINT, \(unescaped: Self.serverClock)) AS now),
                better AS (
                  SELECT \(cautious) AND EXISTS (
                    SELECT 1 FROM instances i, unnest(i.following, i.following_since) AS f(source, since), clock
                    WHERE i.id <> \(lease.holder) AND f.source = \(lease.source) AND i.seen_at > clock.now - \(ttl)
                      AND (\(since)::BIGINT IS NULL OR f.since < \(since)::BIGINT)) AS yes)
                UPDATE leadership SET renewed_at = clock.now,
                  lease_until = CASE WHEN better.yes THEN LEAST(leadership.lease_until, clock.now)
                    ELSE clock.now + \(ttl) END
                FROM clock, better
                WHERE source = \(lease.source) AND holder = \(lease.holder) AND epoch = \(lease.epoch)
                RETURNING lease_until, better.yes
                """, logger: self.queue.logger)
            for try await (until, handedOver) in rows.decode((Int64, Bool).self) where !handedOver {
                var renewed = lease
                renewed.until = until
                return renewed
            }
            return nil
        }
    }

    /// Ends `lease` at `now`, so a standby can take the source at once (a clean shutdown). The
    /// epoch stays: the next leader's is larger.
    public func release(_ lease: Lease, now: Int64? = nil) async throws {
        try await queue.perform { connection in
            _ = try await connection.query(
                """
                WITH clock AS (SELECT COALESCE(\(now)::BIGINT, \(unescaped: Self.serverClock)) AS now)
                UPDATE leadership SET lease_until = LEAST(lease_until, clock.now) FROM clock
                WHERE source = \(lease.source) AND holder = \(lease.holder) AND epoch = \(lease.epoch)
                """, logger: self.queue.logger)
        }
    }

    /// Every source's lease, by source.
    public func leases() async throws -> [Lease] {
        try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT source, holder, epoch, acquired_at, lease_until FROM leadership ORDER BY source",
                logger: self.queue.logger)
            var leases: [Lease] = []
            for try await row in rows.decode((String, String, Int64, Int64, Int64).self) {
                leases.append(Lease(source: row.0, holder: row.1, epoch: row.2, acquiredAt: row.3, until: row.4))
            }
            return leases
        }
    }

    /// The database server's clock, in epoch ms.
    public func now() async throws -> Int64 {
        try await queue.perform { connection in
            let rows = try await connection.query("SELECT \(unescaped: Self.serverClock)", logger: self.queue.logger)
            var now: Int64 = 0
            for try await value in rows.decode(Int64.self) { now = value }
            return now
        }
    }

    /// The time of each lease's last committed engine-state save (`engine_symbols.saved_at`,
    /// the saver's clock, epoch ms), by lease as `leases` assigns keys. A standby forgets the
    /// events it evaluated well before it (Docs/postgres.md#taking-over).
    public func saveMarks(_ leases: SourceLeases) async throws -> [String: Int64] {
        let sources = leases.sources.sorted()
        return try await queue.perform { connection in
            let rows = try await connection.query(
                """
                SELECT CASE WHEN split_part(symbol, ':', 1) = ANY(\(sources)) AND position(':' IN symbol) > 0
                  THEN split_part(symbol, ':', 1) ELSE \(leases.home) END AS lease, MAX(saved_at)
                FROM engine_symbols GROUP BY 1
                """, logger: self.queue.logger)
            var marks: [String: Int64] = [:]
            for try await (lease, mark) in rows.decode((String, Int64).self) { marks[lease] = mark }
            return marks
        }
    }

    // MARK: The fence

    /// Runs `body` in one transaction that first checks that `source` is still led under
    /// `epoch`, and holds that check until the commit. Throws `LostLeadership`, with nothing
    /// written, when another instance has taken the source over; any error `body` throws rolls
    /// back everything it wrote.
    public func write<T: Sendable>(
        source: String, epoch: Int64, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let fence = PostgresFence(source: source, epoch: epoch)
        let logger = queue.logger
        return try await queue.transaction { connection in
            try await Self.check(fence, connection, logger)
            return try await body(connection, logger)
        }
    }

    /// Inside an open transaction: locks `fence.source`'s row against a takeover until the
    /// transaction ends, and throws `LostLeadership` when its epoch is not `fence.epoch`.
    ///
    /// The row lock keeps a takeover waiting until the transaction ends, so the transaction
    /// may not sit idle: should the writer stall (SIGSTOP) between two statements, the server
    /// ends its session after `idleLimit`, which frees the row well within a lease.
    public static func check(_ fence: PostgresFence, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: fenceSQL[0]), logger: logger)
        var lock = PostgresQuery(unsafeSQL: fenceSQL[1])
        lock.binds.append(fence.source, context: .default)
        let rows = try await connection.query(lock, logger: logger)
        var current: (Int64, String)?
        for try await row in rows.decode((Int64, String).self) { current = row }
        guard let current, current.0 == fence.epoch else {
            throw LostLeadership(fence: fence, epoch: current?.0, holder: current?.1)
        }
    }

    /// How long a fenced transaction may sit idle before the server ends it (ms): shorter
    /// than a lease, so a writer stalled in a transaction delays no takeover.
    public static let idleLimit = 2_000

    /// The fence's two statements, in order; `$1` is the source.
    static let fenceSQL = [
        "SET LOCAL idle_in_transaction_session_timeout = '\(idleLimit)ms'",
        "SELECT epoch, holder FROM leadership WHERE source = $1 FOR KEY SHARE"
    ]

    // MARK: Instances

    /// One pricealert sharing the store, as its last heartbeat said.
    public struct Instance: Sendable, Equatable {
        public var id: String
        public var host: String
        public var pid: Int64
        public var startedAt: Int64
        public var seenAt: Int64
        /// The sources it follows, as leader or standby.
        public var sources: [String]
        /// The sources whose prices it evaluates now, each with since when (the store's clock,
        /// epoch ms) it has without a break (`Following.since`); a source whose feed is down is
        /// not among them.
        public var following: [String: Int64]

        public init(
            id: String, host: String, pid: Int64, startedAt: Int64, seenAt: Int64 = 0, sources: [String],
            following: [String: Int64] = [:]
        ) {
            self.id = id
            self.host = host
            self.pid = pid
            self.startedAt = startedAt
            self.seenAt = seenAt
            self.sources = sources
            self.following = following
        }
    }

    /// Records that `instance` is alive at `now` and follows its `sources`, and forgets every
    /// instance not heard from for `forgetAfter` ms (one killed, which could not say goodbye).
    /// Returns the time recorded (the store's clock when `now` is nil).
    @discardableResult
    public func heartbeat(
        _ instance: Instance, now: Int64? = nil, forgetAfter: Int64 = 86_400_000
    ) async throws -> Int64 {
        let followed = instance.following.keys.sorted()
        let since = followed.map { instance.following[$0]! }
        return try await queue.transaction { connection in
            let rows = try await connection.query(
                """
                WITH clock AS (SELECT COALESCE(\(now)::BIGINT, \(unescaped: Self.serverClock)) AS now)
                INSERT INTO instances (id, host, pid, started_at, seen_at, sources, following, following_since)
                SELECT \(instance.id), \(instance.host), \(instance.pid), \(instance.startedAt), clock.now,
                  \(instance.sources), \(followed), \(since) FROM clock
                ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
                  started_at = excluded.started_at, seen_at = excluded.seen_at, sources = excluded.sources,
                  following = excluded.following, following_since = excluded.following_since
                RETURNING seen_at
                """, logger: self.queue.logger)
            var seen: Int64 = 0
            for try await value in rows.decode(Int64.self) { seen = value }
            _ = try await connection.query(
                "DELETE FROM instances WHERE seen_at < \(seen - forgetAfter)", logger: self.queue.logger)
            return seen
        }
    }

    /// Deletes `id`'s heartbeat (a clean shutdown).
    public func forget(instance id: String) async throws {
        try await queue.perform { connection in
            _ = try await connection.query("DELETE FROM instances WHERE id = \(id)", logger: self.queue.logger)
        }
    }

    /// Every instance's last heartbeat, by id.
    public func instances() async throws -> [Instance] {
        try await queue.perform { connection in
            let rows = try await connection.query(
                """
                SELECT id, host, pid, started_at, seen_at, sources, following, following_since FROM instances
                ORDER BY id
                """,
                logger: self.queue.logger)
            var instances: [Instance] = []
            for try await row in rows.decode((String, String, Int64, Int64, Int64, [String], [String], [Int64]).self) {
                instances.append(
                    Instance(
                        id: row.0, host: row.1, pid: row.2, startedAt: row.3, seenAt: row.4, sources: row.5,
                        following: Dictionary(zip(row.6, row.7), uniquingKeysWith: { first, _ in first })))
            }
            return instances
        }
    }

    /// Who has which role for one source, for `pricealert store status`.
    public struct SourceRoles: Sendable, Equatable {
        public var source: String
        /// The source's lease; its holder leads while `until` is ahead of the store's clock.
        public var lease: Lease?
        /// Instances that follow the source, heard from within the staleness limit, other
        /// than a leader whose lease runs.
        public var standbys: [String]
    }

    /// Every source that has a lease or a follower: its lease and standbys at `now` (the
    /// store's clock when nil). An instance not heard from for `stale` ms is no standby.
    public func roles(now: Int64? = nil, stale: Int64 = 10_000) async throws -> (now: Int64, [SourceRoles]) {
        let (leases, instances) = (try await leases(), try await instances())
        var clock: Int64
        if let now { clock = now } else { clock = try await self.now() }
        let sources = Set(leases.map(\.source)).union(instances.flatMap(\.sources)).sorted()
        let roles = sources.map { source in
            let lease = leases.first { $0.source == source }
            let leader = lease.flatMap { $0.until > clock ? $0.holder : nil }
            let standbys = instances.filter {
                $0.sources.contains(source) && $0.id != leader && clock - $0.seenAt <= stale
            }.map(\.id)
            return SourceRoles(source: source, lease: lease, standbys: standbys)
        }
        return (clock, roles)
    }

    // MARK: The schema

    /// Schema step 6 (`PostgresMigrations.all`): the sources each instance evaluates now, and
    /// since when, so that a lease goes to the instance that has followed its source longest.
    static let followingSchema = [
        """
        ALTER TABLE instances ADD COLUMN following TEXT[] NOT NULL DEFAULT '{}',
          ADD COLUMN following_since BIGINT[] NOT NULL DEFAULT '{}'
        """
    ]

    /// The server's clock in epoch ms: what `now` is when a caller gives none.
    static let serverClock = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"

    /// Schema step 2 (`PostgresMigrations.all`).
    static let schema = [
        """
        CREATE TABLE leadership (
          source TEXT PRIMARY KEY, epoch BIGINT NOT NULL, holder TEXT NOT NULL, acquired_at BIGINT NOT NULL,
          renewed_at BIGINT NOT NULL, lease_until BIGINT NOT NULL)
        """,
        """
        CREATE TABLE instances (
          id TEXT PRIMARY KEY, host TEXT NOT NULL, pid BIGINT NOT NULL, started_at BIGINT NOT NULL,
          seen_at BIGINT NOT NULL, sources TEXT[] NOT NULL)
        """,
        """
        CREATE TABLE outbox_ledger (
          delivery_id TEXT NOT NULL, sink TEXT NOT NULL, source TEXT NOT NULL, epoch BIGINT NOT NULL,
          enqueued_at BIGINT NOT NULL, PRIMARY KEY (delivery_id, sink))
        """,
        "CREATE INDEX outbox_ledger_age ON outbox_ledger (enqueued_at)",
        """
        CREATE FUNCTION pricealert_silences_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('\(PostgresSilenceWatcher.channel)', '');
          RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER silences_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON silences
        FOR EACH STATEMENT EXECUTE FUNCTION pricealert_silences_changed()
        """
    ]
}

/// What a leader writes under: a source and the epoch it leads it in.
public struct PostgresFence: Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var epoch: Int64

    public init(source: String, epoch: Int64) {
        self.source = source
        self.epoch = epoch
    }

    public var description: String { "source \(source) epoch \(epoch)" }
}

/// A write under `fence` was refused, and rolled back whole: another instance leads the source
/// now (`epoch`, `holder`), or no instance ever led it (both nil). The writer is a standby from
/// here on.
public struct LostLeadership: Error, Sendable, Equatable, CustomStringConvertible {
    public var fence: PostgresFence
    public var epoch: Int64?
    public var holder: String?

    public var description: String {
        let now =
            if let epoch, let holder { "\(holder) leads it in epoch \(epoch)" } else { "no instance leads it" }
        // Epoch 0 is no leader's: the writer was a standby for the source when it wrote.
        let mine =
            fence.epoch == 0
            ? "this instance does not lead source \(fence.source)"
            : "lost the leadership of source \(fence.source) (epoch \(fence.epoch))"
        return "\(mine): \(now); nothing was written"
    }
}

extension PostgresStore {
    /// Leadership per source, fenced writes and instances' heartbeats, on this store's connection.
    public var leadership: PostgresLeadership { PostgresLeadership(queue) }
}
