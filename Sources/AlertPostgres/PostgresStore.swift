import Logging
import NIOSSL
import PostgresNIO

/// pricealert's tables in one PostgreSQL database (Docs/postgres.md): the outbox, the dead
/// letters and the alerts they name, silences and the backfill ledger, under versioned
/// migrations.
///
/// One connection, used by one task at a time: every statement and transaction is a job on one
/// queue, run in the order it was handed over, so a transaction never interleaves with another
/// of this store's and the outbox's writes keep their order as `DeliveryOutbox` requires.
public final class PostgresStore: Sendable {
    /// The newest schema this binary knows (`pricealert_schema`'s highest version).
    public static var schemaVersion: Int { PostgresMigrations.all.count }

    public var url: PostgresURL { queue.url }
    public let outbox: PostgresOutbox
    public let silences: PostgresSilences
    public let backfill: PostgresBackfillLedger
    let queue: PostgresQueue

    private init(queue: PostgresQueue) {
        self.queue = queue
        outbox = PostgresOutbox(queue)
        silences = PostgresSilences(queue)
        backfill = PostgresBackfillLedger(queue)
    }

    /// Connects to `url` (TLS as its `sslmode` says) and brings the schema up to this binary's
    /// version, each migration in one transaction. Fails naming the URL, without its password,
    /// when the server cannot be reached, refuses the login, or holds a newer schema.
    public static func open(
        _ url: PostgresURL, logger: Logger = Logger(label: "pricealert.postgres")
    )
        async throws(PostgresStoreError) -> PostgresStore
    {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: configuration(url), id: 1, logger: logger)
        } catch {
            throw PostgresStoreError(url: url, doing: "cannot connect", error)
        }
        let store = PostgresStore(queue: PostgresQueue(url: url, connection: connection, logger: logger))
        do {
            try await store.queue.perform { connection in
                try await PostgresMigrations.apply(on: connection, logger: logger)
            }
        } catch {
            await store.close()
            throw PostgresStoreError(url: url, doing: "cannot migrate the schema", error)
        }
        return store
    }

    /// Runs what was handed over, then closes the connection.
    public func close() async {
        await queue.close()
    }

    /// The schema version and the rows of each table, for `pricealert store status`.
    public struct Status: Sendable, Equatable {
        public var schemaVersion: Int
        /// (table, rows), in the order of `PostgresMigrations.tables`.
        public var counts: [(String, Int)]

        public static func == (a: Status, b: Status) -> Bool {
            a.schemaVersion == b.schemaVersion && a.counts.elementsEqual(b.counts, by: { $0 == $1 })
        }
    }

    public func status() async throws(PostgresStoreError) -> Status {
        let logger = queue.logger
        return try await describing("cannot read the status") {
            try await self.queue.perform { connection in
                let version = try await PostgresMigrations.currentVersion(connection, logger: logger)
                var counts: [(String, Int)] = []
                for table in PostgresMigrations.tables {
                    let rows = try await connection.query("SELECT COUNT(*) FROM \(unescaped: table)", logger: logger)
                    var count = 0
                    for try await value in rows.decode(Int.self) { count = value }
                    counts.append((table, count))
                }
                return Status(schemaVersion: version, counts: counts)
            }
        }
    }

    /// Whether the connection is encrypted, as the server sees it (`pg_stat_ssl`).
    public func usesTLS() async throws(PostgresStoreError) -> Bool {
        let logger = queue.logger
        return try await describing("cannot read the connection's TLS state") {
            try await self.queue.perform { connection in
                let rows = try await connection.query(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
                var encrypted = false
                for try await value in rows.decode(Bool.self) { encrypted = value }
                return encrypted
            }
        }
    }

    /// `body`'s error as a `PostgresStoreError` naming this store and what was being done.
    func describing<T>(_ doing: String, _ body: () async throws -> T) async throws(PostgresStoreError) -> T {
        do { return try await body() } catch { throw PostgresStoreError(url: url, doing: doing, error) }
    }

    /// The connection settings `url` gives: its TLS follows `sslmode` as libpq defines it.
    static func configuration(_ url: PostgresURL) throws -> PostgresConnection.Configuration {
        var tls: PostgresConnection.Configuration.TLS
        switch url.sslMode {
        case .disable:
            tls = .disable
        case .prefer, .require:
            var settings = TLSConfiguration.makeClientConfiguration()
            settings.certificateVerification = .none
            let context = try NIOSSLContext(configuration: settings)
            tls = url.sslMode == .prefer ? .prefer(context) : .require(context)
        case .verifyCA, .verifyFull:
            var settings = TLSConfiguration.makeClientConfiguration()
            settings.certificateVerification = url.sslMode == .verifyCA ? .noHostnameVerification : .fullVerification
            if let root = url.sslRootCert { settings.trustRoots = .file(root) }
            tls = .require(try NIOSSLContext(configuration: settings))
        }
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: tls)
        configuration.options.tlsServerName = url.sslMode == .verifyFull ? url.host : nil
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }
}

/// The PostgreSQL store cannot be used. `description` is the whole message: it names the URL
/// without its password, what was being done, and the server's or the network's reason.
public struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    public var url: PostgresURL
    public var doing: String
    public var reason: String
    /// Set when the database holds a schema newer than this binary knows.
    public var newerSchema: Int?

    public init(url: PostgresURL, doing: String, reason: String, newerSchema: Int? = nil) {
        self.url = url
        self.doing = doing
        self.reason = reason
        self.newerSchema = newerSchema
    }

    init(url: PostgresURL, doing: String, _ error: any Error) {
        if let known = error as? PostgresStoreError {
            self = known
        } else if let transaction = error as? PostgresTransactionError, let inner = transaction.closureError {
            self.init(url: url, doing: doing, inner)
        } else if let newer = error as? PostgresMigrations.NewerSchema {
            self.init(url: url, doing: doing, reason: newer.description, newerSchema: newer.version)
        } else {
            self.init(url: url, doing: doing, reason: Self.reason(error, password: url.password))
        }
    }

    static func closed(_ url: PostgresURL) -> PostgresStoreError {
        PostgresStoreError(url: url, doing: "cannot run a statement", reason: "the store was already closed")
    }

    public var description: String { "store \(url): \(doing): \(reason)" }

    /// `error` in a few words: the server's message (with its SQLSTATE), or the network's or
    /// TLS's reason. The password, were it ever echoed, is replaced by `***`.
    static func reason(_ error: any Error, password: String?) -> String {
        let text: String
        if let transaction = error as? PostgresTransactionError, let inner = transaction.closureError {
            return reason(inner, password: password)
        } else if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                text = message + state
            } else if let underlying = error.underlying {
                text = "\(underlying)"
            } else {
                text = "\(error.code)"
            }
        } else {
            text = "\(error)"
        }
        guard let password, !password.isEmpty else { return text }
        return text.replacingOccurrences(of: password, with: "***")
    }
}

/// The store's one connection and the queue of jobs that use it, one at a time, in the order
/// they were handed over.
final class PostgresQueue: Sendable {
    typealias Job = @Sendable (PostgresConnection) async -> Void
    let url: PostgresURL
    let logger: Logger
    private let jobs: AsyncStream<Job>.Continuation
    private let worker: Task<Void, Never>
    private let connection: PostgresConnection

    init(url: PostgresURL, connection: PostgresConnection, logger: Logger) {
        self.url = url
        self.connection = connection
        self.logger = logger
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        jobs = continuation
        worker = Task {
            for await job in stream { await job(connection) }
        }
    }

    /// Runs `body` on the connection once every job handed over before has run.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job: Job = { connection in
                do { continuation.resume(returning: try await body(connection)) } catch {
                    continuation.resume(throwing: error)
                }
            }
            if !submit(job) { continuation.resume(throwing: PostgresStoreError.closed(url)) }
        }
    }

    /// Hands `job` over at once, behind every job handed over before; false when the queue was
    /// closed (the job never runs).
    func submit(_ job: @escaping Job) -> Bool {
        if case .terminated = jobs.yield(job) { return false }
        return true
    }

    /// Runs `body` in one transaction on the connection (see `perform`).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T
    {
        let logger = logger
        return try await perform { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let value = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return value
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Runs what was handed over, then closes the connection. Jobs handed over later fail with
    /// `closed`.
    func close() async {
        jobs.finish()
        await worker.value
        try? await connection.close()
    }

}
