import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization

/// `--listen HOST:PORT`: `/metrics` (Prometheus text format) and `/healthz` (200 `ok` while the
/// feed is healthy, 503 and the reason otherwise) over plain HTTP. It binds exactly what it is
/// given; it has no authentication, so give it a loopback address (Docs/observability.md).
public final class StatusServer: Sendable {
    public struct DidNotStart: Error, CustomStringConvertible {
        public var description: String { "the server stopped before it was listening" }
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
    private let running = Mutex<Running?>(nil)

    /// `refresh` runs before each scrape, to update gauges that are read rather than counted.
    public init(host: String, port: Int, registry: PrometheusCollectorRegistry, status: FeedStatus,
                logger: Logger, refresh: @escaping @Sendable () async -> Void) {
        self.host = host
        self.port = port
        self.registry = registry
        self.status = status
        self.logger = logger
        self.refresh = refresh
    }

    /// Binds and returns the bound port (the chosen one for port 0); throws when it cannot bind.
    public func start() async throws -> Int {
        let (ports, portSink) = AsyncStream<Result<Int, any Error>>.makeStream()
        var quiet = logger  // Hummingbird's own lines (one per request at debug) stay out of the journal
        quiet.logLevel = max(logger.logLevel, .notice)
        let app = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(host, port: port), serverName: "pricealert"),
            onServerRunning: { channel in portSink.yield(.success(channel.localAddress?.port ?? 0)) },
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
        let bound = try first.get()
        running.withLock { $0 = Running(group: group, task: task) }
        return bound
    }

    /// Stops listening and waits for it. Safe to call twice, or without `start()`.
    public func stop() async {
        guard let running = running.withLock({ running in defer { running = nil }; return running }) else { return }
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
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("healthz") { _, _ -> Response in
            let (code, text): (HTTPResponse.Status, String) = switch status.health() {
            case .healthy: (.ok, "ok")
            case .unhealthy(let reason): (.serviceUnavailable, reason)
            }
            return Response(status: code, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
        }
        return router
    }
}
