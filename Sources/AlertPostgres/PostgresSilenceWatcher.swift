import AlertStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Hands the store's silences to this instance whenever they change, whichever instance or
/// command changed them (Docs/postgres.md#several-instances).
///
/// A trigger on `silences` sends a notification on `channel` with every statement that adds,
/// ends or deletes one (schema step 2), delivered when its transaction commits. The watcher
/// holds a connection of its own that LISTENs there; it reads the silences once LISTEN is in
/// place (so nothing committed after the read is missed) and again on every notification, and
/// every `recheck` in any case, which also proves the connection alive: a read that takes more
/// than `recheck` counts as a lost connection. When the connection is lost or cannot be made,
/// it tries again every `retry`, and each new connection reads at once: it polls, one read per
/// `retry`, until notifications flow again.
public final class PostgresSilenceWatcher: Service, Sendable {
    /// The notification channel of `silences`.
    public static let channel = "pricealert_silences"

    public struct Settings: Sendable {
        public var retry: Duration = .seconds(1)
        public var recheck: Duration = .seconds(30)

        public init(retry: Duration = .seconds(1), recheck: Duration = .seconds(30)) {
            self.retry = retry
            self.recheck = recheck
        }
    }

    let url: PostgresURL
    let settings: Settings
    let logger: Logger
    /// Receives every silence (expired ones too) after each change.
    let apply: @Sendable ([SilenceRecord]) -> Void
    private let last = Mutex<[SilenceRecord]?>(nil)

    public init(
        url: PostgresURL, settings: Settings = Settings(), logger: Logger,
        apply: @escaping @Sendable ([SilenceRecord]) -> Void
    ) {
        self.url = url
        self.settings = settings
        self.logger = logger
        self.apply = apply
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var connections = 0
            while !Task.isCancelled {
                connections += 1
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: PostgresStore.configuration(self.url), id: connections, logger: self.logger)
                    do { try await self.follow(connection) } catch {
                        try? await connection.close()
                        throw error
                    }
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning(
                        "silences: lost the notifications of \(self.url): \(PostgresStoreError.reason(error, password: self.url.password)); reading every \(self.settings.retry) until they are back"
                    )
                }
                do { try await Task.sleep(for: self.settings.retry) } catch { return }
            }
        }
    }

    /// LISTENs on `connection` and reads on each notification and each `recheck`, until the
    /// connection fails.
    private func follow(_ connection: PostgresConnection) async throws {
        try await connection.listen(on: Self.channel) { notifications in
            try await read(connection)
            let (wake, wakeUp) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    defer { wakeUp.finish() }
                    for try await _ in notifications { wakeUp.yield() }
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: self.settings.recheck)
                        wakeUp.yield()
                    }
                }
                for await _ in wake { try await read(connection) }
                group.cancelAll()
                try Task.checkCancellation()
                throw ConnectionLost()
            }
        }
    }

    /// Reads the silences within `recheck` and applies them when they changed.
    private func read(_ connection: PostgresConnection) async throws {
        let logger = logger
        let records = try await withThrowingTaskGroup(of: [SilenceRecord]?.self) { group in
            group.addTask { try await PostgresSilences.select("TRUE", nil, connection, logger) }
            group.addTask {
                try await Task.sleep(for: self.settings.recheck)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let first else { throw ConnectionLost() }
            return first
        }
        let changed = last.withLock { last in
            defer { last = records }
            return last != records
        }
        if changed {
            logger.info("silences changed: \(records.count) in the store \(url)")
            apply(records)
        }
    }

    struct ConnectionLost: Error, CustomStringConvertible {
        var description: String { "the connection stopped answering" }
    }
}
