import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Platform
import Prometheus
import ServiceLifecycle
import Synchronization

/// `--listen HOST:PORT`: `/metrics` (Prometheus text format) and `/healthz` (200 `ok` while
/// every feed is healthy, 503 and the reason otherwise; with several feeds, a line per feed
/// after it) over plain HTTP. It binds exactly what it is
/// given; it has no authentication, so give it a loopback address (Docs/observability.md): it
/// logs a warning when the bound address is not one.
///
/// Its connections are bounded (`Limits`), so clients that open many connections, or open them
/// and send nothing or too slowly, cannot take the descriptors that webhook and exec deliveries
/// need: beyond `maxConnections` new connections wait in the kernel's backlog, unaccepted, and a
/// connection with no complete request for `idleTimeout` is closed.
public final class StatusServer: Sendable {
    public struct DidNotStart: Error, CustomStringConvertible {
        public var description: String { "the server stopped before it was listening" }
    }

    public struct Limits: Sendable {
        /// Connections open at once; more wait, unaccepted, until one closes.
        public var maxConnections: Int
        /// How long a connection may go without a complete request head, between requests or
        /// before the first, before it is closed.
        public var idleTimeout: Duration

        public init(maxConnections: Int = 32, idleTimeout: Duration = .seconds(10)) {
            self.maxConnections = max(maxConnections, 1)
            self.idleTimeout = idleTimeout
        }
    }

    private struct Running {
        let group: ServiceGroup
        let task: Task<Void, any Error>
    }

    public let host: String
    public let port: Int
    private let registry: PrometheusCollectorRegistry
    private let status: FeedStatus
    private let refresh: @Sendable () async -> Void
    private let logger: Logger
    private let limits: Limits
    private let running = Mutex<Running?>(nil)
    private let connections = ConnectionCount()

    /// `refresh` runs before each scrape, to update gauges that are read rather than counted.
    public init(
        host: String, port: Int, registry: PrometheusCollectorRegistry, status: FeedStatus,
        logger: Logger, limits: Limits = Limits(), refresh: @escaping @Sendable () async -> Void
    ) {
        self.host = host
        self.port = port
        self.registry = registry
        self.status = status
        self.logger = logger
        self.limits = limits
        self.refresh = refresh
    }

    /// `start()` bound and `stop()` has not been called since.
    public var isRunning: Bool { running.withLock { $0 != nil } }

    /// Connections accepted and not yet closed; never more than `limits.maxConnections`.
    public var openConnections: Int { connections.open.load(ordering: .relaxed) }

    /// The most connections that were open at once since the server was made.
    public var mostConnections: Int { connections.most.load(ordering: .relaxed) }

    /// Binds and returns the bound port (the chosen one for port 0); throws when it cannot bind.
    public func start() async throws -> Int {
        let (ports, portSink) = AsyncStream<Result<SocketAddress?, any Error>>.makeStream()
        var quiet = logger // Hummingbird's own lines (one per request at debug) stay out of the journal
        quiet.logLevel = max(logger.logLevel, .notice)
        let app = Application(
            router: makeRouter(),
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: "pricealert",
                availableConnectionsDelegate: ConnectionLimit(
                    max: limits.maxConnections,
                    count: connections)),
            onServerRunning: { channel in
                // One connection per accept, so the limit is exact: the gate is asked before each.
                try? await channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
                portSink.yield(.success(channel.localAddress))
            },
            logger: quiet)
        let group = ServiceGroup(configuration: .init(services: [app], logger: quiet))
        let task = Task {
            defer { portSink.finish() }
            do {
                try await group.run()
            } catch {
                portSink.yield(.failure(error))
                throw error
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let first = await iterator.next() else { throw DidNotStart() }
        let address = try first.get()
        running.withLock { $0 = Running(group: group, task: task) }
        if let address, !Self.isLoopback(address) {
            logger.warning(
                "--listen \(host): not a loopback address; /metrics and /healthz have no authentication, so anyone who can reach it can read them"
            )
        }
        return address?.port ?? 0
    }

    /// 127.0.0.0/8, ::1 and IPv4-mapped 127.x: what only this machine can reach.
    static func isLoopback(_ address: SocketAddress) -> Bool {
        guard let ip = address.ipAddress?.lowercased() else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }

    /// Stops listening and waits for it. Safe to call twice, or without `start()`.
    public func stop() async {
        guard
            let running = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        await running.group.triggerGracefulShutdown()
        _ = try? await running.task.value
    }

    private func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        let registry = self.registry
        let refresh = self.refresh
        let status = self.status
        router.get("metrics") { _, _ -> Response in
            await refresh()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("healthz") { _, _ -> Response in
            let (code, text): (HTTPResponse.Status, String) =
                switch status.health() {
                case .healthy: (.ok, "ok")
                case .unhealthy(let reason): (.serviceUnavailable, reason)
                }
            // With several feeds, one line per feed follows: `NAME: ok` or `NAME: why`.
            let sources = status.sources()
            var lines = sources.count < 2 ? [] : sources.map { "\($0.name): \(Self.text($0.verdict))" }
            // With several instances on one store: `role NAME: leader (epoch N)` or `role NAME: standby`.
            lines += status.roleLines().map { "role \($0.source): \($0.role)" }
            return Response(
                status: code, headers: [.contentType: "text/plain; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: ([text] + lines).joined(separator: "\n") + "\n")))
        }
        return router
    }

    private static func text(_ verdict: FeedStatus.Verdict) -> String {
        switch verdict {
        case .healthy: "ok"
        case .unhealthy(let reason): reason
        }
    }
}

/// The open-connection count, shared by the server's accept handler (which changes it on its
/// event loop) and `openConnections` readers.
final class ConnectionCount: Sendable {
    let open = Atomic<Int>(0)
    let most = Atomic<Int>(0)

    func opened() {
        let now = open.add(1, ordering: .relaxed).newValue
        most.max(now, ordering: .relaxed)
    }
}

/// Hummingbird's accept gate: the server channel stops accepting while `max` connections are
/// open and resumes when one closes. Only the server channel's event loop calls the mutating
/// methods; the count itself is an atomic so others may read it.
struct ConnectionLimit: AvailableConnectionsDelegate {
    let max: Int
    let count: ConnectionCount

    mutating func connectionOpened() { count.opened() }
    mutating func connectionClosed() { count.open.subtract(1, ordering: .relaxed) }
    func isAcceptingNewConnections() -> Bool { count.open.load(ordering: .relaxed) < max }
}
