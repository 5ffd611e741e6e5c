import Logging
import PostgresNIO
import Synchronization

/// What each of the store's connections holds for its session: with `exclusive` (a `check`),
/// the store's session advisory lock, as a state folder's `flock` holds a folder, so two checks
/// never evaluate one store at once (`run`s share a store without it: leadership per source
/// decides which writes). PostgreSQL drops the lock when the session ends, also when the
/// process is killed.
///
/// After a reconnect the lock is taken again. When the server still holds it for this process's
/// previous session (the server has not noticed the old connection is gone), that session is
/// ended (`pg_terminate_backend`, allowed for the role's own sessions) and the lock taken. When
/// another pricealert took it meanwhile, the store is lost (`lost`): this process must write
/// nothing more.
final class PostgresSession: Sendable {
    let url: PostgresURL
    let exclusive: Bool
    /// The session's `application_name` (`pricealert run`, `pricealert check`): what another
    /// pricealert that finds the lock held, and `pg_stat_activity`, see.
    let application: String
    let logger: Logger
    /// The server's process for the session that holds the lock, once it does.
    private let backend = Mutex<Int?>(nil)
    private let lostReason = Mutex<String?>(nil)

    /// The advisory lock's two keys (`pg_try_advisory_lock(int, int)`): "pric" and "run ".
    static let lockKeys: (Int32, Int32) = (0x7072_6963, 0x7275_6e20)

    init(url: PostgresURL, exclusive: Bool, application: String, logger: Logger) {
        self.url = url
        self.exclusive = exclusive
        self.application = application
        self.logger = logger
    }

    /// Why the store was lost, or nil while it is held.
    var lost: String? { lostReason.withLock { $0 } }

    /// Takes the lock on `connection` when `exclusive`; throws `PostgresStoreError` with
    /// `heldBy` set when another session holds it.
    func prepare(_ connection: PostgresConnection, again: Bool) async throws {
        try await connection.query("SELECT set_config('application_name', \(application), false)", logger: logger)
        guard exclusive else { return }
        if try await Self.tryLock(connection, logger) {
            let pid = try await Self.backendPID(connection, logger)
            backend.withLock { $0 = pid }
            return
        }
        var holder = try await Self.holder(connection, logger)
        if again, let previous = backend.withLock({ $0 }), holder?.pid == previous {
            logger.notice(
                "store \(url): ending this process's previous session (backend pid \(previous)), which still holds the store's lock"
            )
            try await connection.query("SELECT pg_terminate_backend(\(previous))", logger: logger)
            // The ended session lets go of the lock as it exits.
            for _ in 0..<50 {
                if try await Self.tryLock(connection, logger) {
                    let pid = try await Self.backendPID(connection, logger)
                    backend.withLock { $0 = pid }
                    return
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            holder = try await Self.holder(connection, logger)
        }
        let who = holder.map { "PostgreSQL backend pid \($0.pid) from \($0.client)" } ?? "another session"
        var error = PostgresStoreError(
            url: url, doing: again ? "lost the store" : "cannot hold the store",
            reason:
                "it is in use by another pricealert that holds it alone (\(who)), as a check does while it evaluates (Docs/postgres.md#check-from-cron-on-several-hosts)"
        )
        error.heldBy = who
        error.holderApplication = holder?.application
        if again { lostReason.withLock { $0 = error.description } }
        throw error
    }

    private static func tryLock(_ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT pg_try_advisory_lock(\(lockKeys.0), \(lockKeys.1))", logger: logger)
        var got = false
        for try await value in rows.decode(Bool.self) { got = value }
        return got
    }

    private static func backendPID(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT pg_backend_pid()", logger: logger)
        var pid = 0
        for try await value in rows.decode(Int.self) { pid = value }
        return pid
    }

    /// The session holding the lock: its server process, where it connects from and its
    /// `application_name`.
    private static func holder(
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (pid: Int, client: String, application: String)? {
        let rows = try await connection.query(
            """
            SELECT l.pid, COALESCE(host(a.client_addr), 'a local socket'), COALESCE(a.application_name, '')
            FROM pg_locks l
            LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid::BIGINT = \(Int64(lockKeys.0))
              AND l.objid::BIGINT = \(Int64(lockKeys.1)) AND l.objsubid = 2
            """, logger: logger)
        var found: (Int, String, String)?
        for try await row in rows.decode((Int, String, String).self) { found = row }
        return found
    }
}
