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
    public let engineState: PostgresEngineState
    public let policyJournal: PostgresPolicyJournal
    public let knownMarkets: PostgresListings
    let queue: PostgresQueue
    let session: PostgresSession
    let fencing = StoreFencing()

    private init(queue: PostgresQueue, session: PostgresSession) {
        self.queue = queue
        self.session = session
        outbox = PostgresOutbox(queue, fencing: fencing)
        silences = PostgresSilences(queue)
        backfill = PostgresBackfillLedger(queue)
        engineState = PostgresEngineState(queue, outbox: outbox)
        policyJournal = PostgresPolicyJournal(outbox)
        knownMarkets = PostgresListings(queue)
    }

    /// How a process uses the store.
    public struct Use: Sendable {
        /// A lost connection is made again and every write waits for it (a daemon); otherwise
        /// what meets a lost connection fails with the reason (a command).
        public var reconnects: Bool
        /// The store is held for this process alone, by a session advisory lock, as a state
        /// folder's lock holds a folder (`run`, `check`): a second such process is refused.
        public var exclusive: Bool

        public init(reconnects: Bool = false, exclusive: Bool = false) {
            self.reconnects = reconnects
            self.exclusive = exclusive
        }
    }

    /// Connects to `url` (TLS as its `sslmode` says) and brings the schema up to this binary's
    /// version, each migration in one transaction. Fails naming the URL, without its password,
    /// when the server cannot be reached (`unreachable` set), refuses the login, holds a newer
    /// schema, or (`exclusive`) is held by another pricealert (`heldBy` set).
    public static func open(
        _ url: PostgresURL, use: Use = Use(), logger: Logger = Logger(label: "pricealert.postgres")
    )
        async throws(PostgresStoreError) -> PostgresStore
    {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: configuration(url), id: 1, logger: logger)
        } catch {
            var failure = PostgresStoreError(url: url, doing: "cannot connect", error)
            failure.unreachable = PostgresStoreError.isUnreachable(error)
            throw failure
        }
        let session = PostgresSession(url: url, exclusive: use.exclusive, logger: logger)
        let queue = PostgresQueue(
            url: url, connection: connection, logger: logger, reconnects: use.reconnects,
            prepare: { connection, again in try await session.prepare(connection, again: again) })
        let store = PostgresStore(queue: queue, session: session)
        do {
            try await store.queue.perform { connection in
                try await PostgresMigrations.apply(on: connection, logger: logger)
            }
        } catch {
            await store.close()
            throw PostgresStoreError(url: url, doing: "cannot migrate the schema", error)
        }
        do {
            try await store.queue.perform { connection in try await session.prepare(connection, again: false) }
        } catch {
            await store.close()
            throw PostgresStoreError(url: url, doing: "cannot hold the store", error)
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
    /// Set when the server could not be reached at all (a temporary failure: exit 75).
    public var unreachable = false
    /// Set when another pricealert holds the store (`PostgresStore.Use.exclusive`).
    public var heldBy: String?

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

    /// Whether `error`, met while connecting, means no server answered (refused, timed out,
    /// unreachable), rather than one that answered and refused (login, TLS).
    static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return true }
        return error.code == .connectionError || error.code == .serverClosedConnection
            || error.code == .uncleanShutdown
    }

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
