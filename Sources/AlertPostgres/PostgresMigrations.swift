import Logging
import PostgresNIO

/// The schema, as numbered steps. `pricealert_schema` holds one row per step applied. Each step
/// runs in one transaction with its row, under a transaction-scoped advisory lock, so two
/// pricealerts starting at once apply it once, and a step that fails leaves nothing behind.
/// A database whose highest step is above what this binary knows is refused: an older binary
/// must not write into a newer schema.
///
/// Steps are only ever appended; a released one is never edited. Every table a leader writes
/// is written in transactions that the store opens, so the fence
/// (`PostgresLeadership.check`, Docs/postgres.md#the-fence) can open each of them.
enum PostgresMigrations {
    struct Step: Sendable {
        var description: String
        var sql: [String]
    }

    /// The advisory lock key the steps run under (`pricealert` in ASCII).
    static let lockKey: Int64 = 0x7072_6963_6561_6c72

    /// The tables `store status` counts, in that order.
    static let tables = [
        "outbox", "dead_letters", "alerts", "silences", "backfill_ledger", "engine_symbols", "engine_history",
        "market_list", "policy_pending", "listings", "source_market_lists", "source_listings"
    ]

    static let all: [Step] = [
        Step(
            description: "outbox, dead letters and alerts; silences; backfill ledger",
            sql: [
                """
                CREATE TABLE alerts (
                  id TEXT PRIMARY KEY, refs BIGINT NOT NULL, rule TEXT NOT NULL, symbol TEXT NOT NULL,
                  time BIGINT NOT NULL, price DOUBLE PRECISION NOT NULL, condition TEXT NOT NULL,
                  threshold_low DOUBLE PRECISION NOT NULL, threshold_high DOUBLE PRECISION,
                  threshold_null BOOLEAN NOT NULL, value DOUBLE PRECISION NOT NULL, message TEXT NOT NULL,
                  notify TEXT NOT NULL, kind TEXT NOT NULL, reminder BIGINT, source TEXT)
                """,
                """
                CREATE TABLE outbox (
                  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, sink TEXT NOT NULL, delivery_id TEXT NOT NULL,
                  alerts TEXT NOT NULL, digest BOOLEAN NOT NULL, held BOOLEAN NOT NULL, urgent BOOLEAN NOT NULL,
                  created_at BIGINT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0, next_attempt_at BIGINT NOT NULL,
                  last_error TEXT, locked_by TEXT, locked_until BIGINT,
                  UNIQUE (delivery_id, sink))
                """,
                "CREATE INDEX outbox_due ON outbox (sink, next_attempt_at, id)",
                """
                CREATE TABLE dead_letters (
                  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, sink TEXT NOT NULL, delivery_id TEXT NOT NULL,
                  alerts TEXT NOT NULL, digest BOOLEAN NOT NULL, held BOOLEAN NOT NULL, urgent BOOLEAN NOT NULL,
                  created_at BIGINT NOT NULL, attempts BIGINT NOT NULL, last_error TEXT, reason TEXT NOT NULL,
                  died_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE silences (
                  id TEXT PRIMARY KEY, rule TEXT NOT NULL, symbol TEXT NOT NULL, starts_at BIGINT NOT NULL,
                  ends_at BIGINT NOT NULL, comment TEXT NOT NULL, created_at BIGINT NOT NULL, expired_at BIGINT)
                """,
                """
                CREATE TABLE backfill_ledger (
                  source TEXT NOT NULL, symbol TEXT NOT NULL, reach BIGINT NOT NULL, fetched_at BIGINT NOT NULL,
                  candles BIGINT NOT NULL, PRIMARY KEY (source, symbol))
                """
            ]),
        Step(
            description:
                "leadership per source with a fencing epoch; instances; the outbox's id ledger; silence notifications; sink rates",
            sql: PostgresLeadership.schema + PostgresSinkRates.schema),
        Step(
            description: "engine state, market list, policy journal, known markets",
            sql: [
                // A symbol's `SymbolSnapshot` without its minute history, which is kept by hour
                // beside it (as in SQLite's `symbol_state` and `symbol_history`).
                """
                CREATE TABLE engine_symbols (symbol TEXT PRIMARY KEY, snapshot BYTEA NOT NULL, saved_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE engine_history (
                  symbol TEXT NOT NULL, hour BIGINT NOT NULL, entries BYTEA NOT NULL, PRIMARY KEY (symbol, hour))
                """,
                // At most one row: the last market list's source and time.
                """
                CREATE TABLE market_list_meta (
                  one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), source TEXT NOT NULL, fetched_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE market_list (
                  position BIGINT PRIMARY KEY, symbol TEXT NOT NULL, name TEXT NOT NULL, base TEXT NOT NULL,
                  quote TEXT NOT NULL, future BOOLEAN NOT NULL, active BOOLEAN NOT NULL)
                """,
                """
                CREATE TABLE policy_pending (
                  seq BIGINT PRIMARY KEY, sink TEXT NOT NULL, alert_id TEXT NOT NULL, rule TEXT NOT NULL,
                  symbol TEXT NOT NULL, time BIGINT NOT NULL, price DOUBLE PRECISION NOT NULL, condition TEXT NOT NULL,
                  threshold_low DOUBLE PRECISION NOT NULL, threshold_high DOUBLE PRECISION,
                  threshold_null BOOLEAN NOT NULL, value DOUBLE PRECISION NOT NULL, message TEXT NOT NULL,
                  notify TEXT NOT NULL, kind TEXT NOT NULL, reminder BIGINT, quiet BOOLEAN, source TEXT,
                  UNIQUE (sink, alert_id))
                """,
                // The markets `listed` rules know; the meta row says a list was saved (none: no
                // list seen yet, which differs from an empty list).
                """
                CREATE TABLE listings_meta (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), saved_at BIGINT NOT NULL)
                """,
                "CREATE TABLE listings (symbol TEXT PRIMARY KEY, pending BOOLEAN NOT NULL)"
            ]),
        Step(
            description: "check's last evaluation; each rule-file source's market list and known markets",
            sql: [
                // At most one row: when the last `check` that evaluated began (the store's clock),
                // and where it ran (Docs/postgres.md#check-from-cron-on-several-hosts).
                """
                CREATE TABLE check_runs (
                  one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), began_at BIGINT NOT NULL, host TEXT NOT NULL,
                  pid BIGINT NOT NULL)
                """,
                // A rule-file source's last market list (`markets-NAME.json` in a state folder).
                """
                CREATE TABLE source_market_lists (
                  source TEXT PRIMARY KEY, fetched_at BIGINT NOT NULL, symbols TEXT[] NOT NULL, names TEXT[] NOT NULL,
                  bases TEXT[] NOT NULL, quotes TEXT[] NOT NULL, futures BOOLEAN[] NOT NULL, actives BOOLEAN[] NOT NULL)
                """,
                // A rule-file source's known markets (`listings-NAME.txt`): a row per source that
                // saved a list, with its known symbols and those waiting for their first tick.
                """
                CREATE TABLE source_listings (
                  source TEXT PRIMARY KEY, known TEXT[] NOT NULL, pending TEXT[] NOT NULL, saved_at BIGINT NOT NULL)
                """
            ]),
        Step(
            description: "policy journal rows known by (sink, event), in one order from a sequence for every writer",
            sql: PostgresPolicyJournal.sharedOrder),
        Step(
            description: "the sources each instance follows now, and since when",
            sql: PostgresLeadership.followingSchema),
        Step(
            description: "claims walk a sink's outbox rows in claim order (index outbox_claim, function claim_outbox)",
            sql: [
                "DROP INDEX outbox_due",
                "CREATE INDEX outbox_claim ON outbox (sink, urgent DESC, id)",
                PostgresOutbox.claimFunction
            ])
    ]

    /// Applies the steps `connection`'s database lacks, each in its own transaction; throws
    /// `PostgresStoreError` with `newerSchema` set when the database is ahead of `all`.
    static func apply(on connection: PostgresConnection, logger: Logger, steps: [Step] = all) async throws {
        // Under the lock too: two `CREATE TABLE IF NOT EXISTS` at once can both find no table
        // and one then fails on the catalog's unique index (SQLSTATE 23505).
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS pricealert_schema (
                  version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """, logger: logger)
        }
        while true {
            let applied = try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                let version = try await currentVersion(connection, logger: logger)
                if version > steps.count { throw NewerSchema(version: version, known: steps.count) }
                guard version < steps.count else { return false }
                let step = steps[version]
                for statement in step.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO pricealert_schema (version, description) VALUES (\(Int64(version + 1)), \(step.description))",
                    logger: logger)
                return true
            }
            if !applied { return }
        }
    }

    /// The highest step applied (0: none).
    static func currentVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT COALESCE(MAX(version), 0) FROM pricealert_schema", logger: logger)
        var version = 0
        for try await value in rows.decode(Int.self) { version = value }
        return version
    }

    struct NewerSchema: Error, CustomStringConvertible {
        var version: Int
        var known: Int
        var description: String {
            "the database holds schema \(version), newer than this pricealert knows (\(known)); use the pricealert that wrote it, or a newer one"
        }
    }
}
