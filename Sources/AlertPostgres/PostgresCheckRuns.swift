import Platform
import PostgresNIO

/// `check` from cron on several hosts against one store (Docs/postgres.md#check-from-cron-on-several-hosts):
/// the check that holds the store (`Use.exclusive`) evaluates unless another evaluated less than
/// half an interval ago, and marks its own evaluation once its state is saved. Times are the
/// database server's (`clock_timestamp()`), so the hosts' clocks do not matter.
extension PostgresStore {
    /// The last `check` that evaluated this store.
    public struct CheckEvaluation: Sendable, Equatable {
        /// When it began, epoch ms on the store's clock.
        public var began: Int64
        public var host: String
        public var pid: Int
    }

    /// The store's clock now (epoch ms), and the last evaluation when it began less than
    /// `within` before now (then this check has nothing to do).
    public func lastCheck(
        within: Duration
    ) async throws(PostgresStoreError) -> (
        now: Int64, recent: CheckEvaluation?
    ) {
        let logger = queue.logger
        let window = within.milliseconds
        return try await describing("cannot read the last check") {
            try await self.queue.perform { connection in
                let rows = try await connection.query(
                    """
                    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT, r.began_at, r.host, r.pid
                    FROM (SELECT 1) AS one LEFT JOIN check_runs r ON TRUE
                    """, logger: logger)
                var found: (Int64, CheckEvaluation?) = (0, nil)
                for try await row in rows.decode((Int64, Int64?, String?, Int?).self) {
                    let last = row.1.map { CheckEvaluation(began: $0, host: row.2 ?? "", pid: row.3 ?? 0) }
                    found = (row.0, last.flatMap { row.0 - $0.began < window ? $0 : nil })
                }
                return found
            }
        }
    }

    /// Marks an evaluation by `host`'s process `pid` that began at `began` (`lastCheck`'s `now`).
    public func markChecked(began: Int64, host: String, pid: Int) async throws(PostgresStoreError) {
        let logger = queue.logger
        try await describing("cannot mark this check's evaluation") {
            try await self.queue.transaction { connection in
                _ = try await connection.query(
                    """
                    INSERT INTO check_runs (one, began_at, host, pid) VALUES (TRUE, \(began), \(host), \(Int64(pid)))
                    ON CONFLICT (one) DO UPDATE SET began_at = excluded.began_at, host = excluded.host, pid = excluded.pid
                    """, logger: logger)
            }
        }
    }
}
