import Logging
import Platform
import PostgresNIO
import Synchronization

/// The store's one connection and the queue of jobs that use it, one at a time, in the order
/// they were handed over.
///
/// When the connection drops (the server restarted, the network cut), a queue that
/// `reconnects` (a daemon's) keeps every job and runs the one that met the drop again on a
/// new connection, made with the one `Backoff` (1 s doubling to 30 s), so nothing handed over
/// is lost and the order holds. The outage is logged once when it starts and once when it ends,
/// naming the URL without its password. A queue that does not reconnect (a command's) fails the
/// job with the reason instead. Once `close` is called, a queue that cannot reach the server
/// within `closingGrace` fails what is left.
final class PostgresQueue: Sendable {
    /// A job's run: its connection, or why there is none (the queue gave up: it is closing, or
    /// it does not reconnect); it says whether it met a dropped connection (then it is run again
    /// on the next connection).
    typealias Job = @Sendable (Result<PostgresConnection, any Error>, Attempt) async -> Ran
    enum Ran: Sendable { case done, connectionLost(any Error) }

    let url: PostgresURL
    let logger: Logger
    let reconnects: Bool
    let closingGrace: Duration
    private let jobs: AsyncStream<Job>.Continuation
    private let worker = Mutex<Task<Void, Never>?>(nil)
    /// Set by `close`: a reconnect gives up once `closingGrace` has passed since.
    private let closingSince = Mutex<ContinuousClock.Instant?>(nil)
    /// Run on each new connection before any job: what the session must hold (the store's lock).
    private let prepare: @Sendable (PostgresConnection, _ again: Bool) async throws -> Void
    /// The connection's number (one more for each new connection) and the attempt running on it,
    /// for the watch that abandons the attempt when the connection closes.
    private let running = Mutex<(generation: Int, attempt: Attempt?)>((0, nil))

    init(
        url: PostgresURL, connection: PostgresConnection, logger: Logger, reconnects: Bool,
        closingGrace: Duration = .seconds(10),
        prepare: @escaping @Sendable (PostgresConnection, _ again: Bool) async throws -> Void
    ) {
        self.url = url
        self.logger = logger
        self.reconnects = reconnects
        self.closingGrace = closingGrace
        self.prepare = prepare
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        jobs = continuation
        let task = Task { [self] in
            var current: PostgresConnection? = connection
            var generation = 0
            watch(connection, generation)
            var lastError: (any Error)?
            // Once a reconnect gave up, the remaining jobs fail with its reason.
            var gaveUp = false
            for await job in stream {
                while true {
                    // A statement sent on a connection the server has closed is never answered
                    // (postgres-nio 1.33 fails the write without failing the query), so a closed
                    // connection is never handed to a job; one that closes during a statement
                    // fails that statement.
                    if let live = current, live.isClosed {
                        lastError = ConnectionClosed()
                        try? await live.close()
                        current = nil
                    }
                    if current == nil, reconnects, !gaveUp {
                        do {
                            let connection = try await connectAgain(after: lastError)
                            generation += 1
                            watch(connection, generation)
                            current = connection
                        } catch {
                            lastError = error
                            gaveUp = true
                        }
                    }
                    guard let live = current else {
                        _ = await job(.failure(lastError ?? PostgresStoreError.closed(url)), Attempt())
                        break
                    }
                    guard case .connectionLost(let error) = await run(job, on: live, generation: generation) else {
                        break
                    }
                    lastError = error
                    try? await live.close()
                    current = nil
                    if !reconnects {
                        _ = await job(.failure(error), Attempt())
                        break
                    }
                }
            }
            try? await current?.close()
        }
        worker.withLock { $0 = task }
    }

    /// Marks `connection` as number `generation` and abandons the attempt running on it when it
    /// closes.
    private func watch(_ connection: PostgresConnection, _ generation: Int) {
        running.withLock { $0 = (generation, nil) }
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.running.withLock { $0.generation == generation ? $0.attempt : nil }?.abandon()
        }
    }

    /// Runs `job` on `live` in a task of its own, and returns what it says, or `connectionLost`
    /// as soon as the connection closes under it: a statement sent as the connection closes is
    /// never answered (postgres-nio 1.33 fails the write without failing the statement), so a
    /// job waiting on one is left behind, and whatever it would still hand over is suppressed
    /// (`Attempt.effect`); the job is run again on the next connection.
    private func run(_ job: @escaping Job, on live: PostgresConnection, generation: Int) async -> Ran {
        let attempt = Attempt()
        running.withLock { if $0.generation == generation { $0.attempt = attempt } }
        let ran = await withCheckedContinuation { (continuation: CheckedContinuation<Ran, Never>) in
            attempt.start(continuation)
            if live.isClosed {
                attempt.abandon()
                return
            }
            Task { attempt.finish(await job(.success(live), attempt)) }
        }
        running.withLock { if $0.generation == generation { $0.attempt = nil } }
        return ran
    }

    /// Whether `error`, met on `connection`, means the connection is gone rather than that the
    /// statement failed: the client or the server closed it, the network failed, or the server is
    /// shutting down (SQLSTATE class 57P: admin shutdown, crash shutdown, cannot connect now).
    static func isConnectionLoss(_ error: any Error, on connection: PostgresConnection) -> Bool {
        if connection.isClosed { return true }
        if let transaction = error as? PostgresTransactionError {
            return transaction.closureError.map { isConnectionLoss($0, on: connection) } ?? true
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state.hasPrefix("08")
        default:
            return false
        }
    }

    /// A new connection, prepared; waits by the backoff between attempts. Throws the last reason
    /// when the queue is closing and its grace has passed, or when preparing the session says
    /// the store cannot be used any more (`PostgresStoreError`: its lock was taken).
    private func connectAgain(after lost: (any Error)?) async throws -> PostgresConnection {
        let began = ContinuousClock.now
        let reason = lost.map { PostgresStoreError.reason($0, password: url.password) } ?? "connection lost"
        logger.error("store \(url): \(reason); waiting for the database (writes are kept, in order)")
        var backoff = Backoff(base: .seconds(1), cap: .seconds(30))
        var attempts = 0
        var failure: any Error = lost ?? PostgresStoreError.closed(url)
        while true {
            attempts += 1
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: PostgresStore.configuration(url), id: attempts + 1, logger: logger)
                do {
                    try await prepare(connection, true)
                } catch {
                    try? await connection.close()
                    throw error
                }
                let seconds = Double((ContinuousClock.now - began).milliseconds) / 1000
                logger.notice(
                    "store \(url): connected again after \(String(format: "%.1f", seconds)) s and \(attempts) attempt\(attempts == 1 ? "" : "s")"
                )
                return connection
            } catch {
                logger.debug(
                    "store \(url): reconnect failed: \(PostgresStoreError.reason(error, password: url.password))")
                if error is PostgresStoreError {
                    logger.error("\(error)")
                    throw error
                }
                failure = error
            }
            var wait = backoff.next()
            while wait > .zero {
                if let since = closingSince.withLock({ $0 }), ContinuousClock.now - since >= closingGrace {
                    throw failure
                }
                let slice = min(wait, .milliseconds(250))
                try? await Task.sleep(for: slice)
                wait -= slice
            }
        }
    }

    /// Runs `body` on the connection once every job handed over before has run.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await perform { connection, _ in try await body(connection) }
    }

    /// `perform`, with the attempt `body` runs in (to hand over what it made only while the
    /// attempt stands: `Attempt.effect`).
    func perform<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection, Attempt) async throws -> T
    ) async throws -> T {
        let reconnects = self.reconnects
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job: Job = { connection, attempt in
                switch connection {
                case .failure(let error):
                    attempt.complete { continuation.resume(throwing: error) }
                case .success(let connection):
                    do {
                        let value = try await body(connection, attempt)
                        attempt.complete { continuation.resume(returning: value) }
                    } catch {
                        if reconnects, Self.isConnectionLoss(error, on: connection) { return .connectionLost(error) }
                        attempt.complete { continuation.resume(throwing: error) }
                    }
                }
                return .done
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

    /// Runs `body` in one transaction on the connection (see `perform` and `write`).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T
    {
        let logger = logger
        return try await perform { connection in
            try await Self.write(connection, logger, body)
        }
    }

    /// Every write the store makes, in one transaction: the outbox's inserts and outcomes, the
    /// policy journal's changes, the engine's saves, silences and the ledger. The one place a
    /// fencing check (Docs/postgres.md#fencing) goes, so that it guards each of them alike.
    static func write<T>(
        _ connection: PostgresConnection, _ logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
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

    /// From now on, a reconnect gives up once `closingGrace` has passed (the process is stopping).
    func stopping() {
        closingSince.withLock { $0 = $0 ?? .now }
    }

    /// Runs what was handed over (giving up on an unreachable server after `closingGrace`),
    /// then closes the connection. Jobs handed over later fail with `closed`.
    func close() async {
        stopping()
        jobs.finish()
        await worker.withLock { $0 }?.value
    }
}

/// The server closed the store's connection while it was idle (restarted, or the session ended).
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the server closed the connection" }
}

/// One run of a job on one connection. What the job hands over (a caller resumed, a callback
/// called, a kept write dropped) goes through `effect`, which does nothing once the attempt was
/// abandoned because its connection closed: the job is then run again on the next connection,
/// and a run left behind can change nothing.
final class Attempt: Sendable {
    private struct State {
        var abandoned = false
        /// What the worker gets, once decided.
        var outcome: PostgresQueue.Ran?
        var worker: CheckedContinuation<PostgresQueue.Ran, Never>?
    }
    private let state = Mutex(State())

    /// Runs `body` unless the attempt was abandoned; false when it was. For a hand-over the job
    /// goes on after (a kept write made on the way); the job's last one is `complete`.
    @discardableResult
    func effect(_ body: () -> Void) -> Bool {
        state.withLock { state in
            guard !state.abandoned else { return false }
            body()
            return true
        }
    }

    /// Runs `body`, the job's last hand-over, and decides the attempt `done` in the same step,
    /// unless it was abandoned (false then). A connection that closes after it can then no
    /// longer make the job run again: a job run again after it handed over would hand over twice
    /// (an alert's rows given to delivery twice, a caller resumed twice).
    @discardableResult
    func complete(_ body: () -> Void) -> Bool {
        let (ran, worker) = state.withLock { state -> (Bool, CheckedContinuation<PostgresQueue.Ran, Never>?) in
            guard !state.abandoned, state.outcome == nil else { return (false, nil) }
            body()
            state.outcome = .done
            defer { state.worker = nil }
            return (true, state.worker)
        }
        worker?.resume(returning: .done)
        return ran
    }

    /// The worker waits for the outcome (at once when it is decided already).
    func start(_ worker: CheckedContinuation<PostgresQueue.Ran, Never>) {
        let decided = state.withLock { state -> PostgresQueue.Ran? in
            if state.outcome == nil { state.worker = worker }
            return state.outcome
        }
        if let decided { worker.resume(returning: decided) }
    }

    /// The job returned `ran`.
    func finish(_ ran: PostgresQueue.Ran) {
        decide(ran, abandoning: false)
    }

    /// The connection closed under the job.
    func abandon() {
        decide(.connectionLost(ConnectionClosed()), abandoning: true)
    }

    private func decide(_ ran: PostgresQueue.Ran, abandoning: Bool) {
        let worker = state.withLock { state -> CheckedContinuation<PostgresQueue.Ran, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = ran
            if abandoning { state.abandoned = true }
            defer { state.worker = nil }
            return state.worker
        }
        worker?.resume(returning: ran)
    }
}
