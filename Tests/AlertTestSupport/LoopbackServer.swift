public import Hummingbird
import Logging
import ServiceLifecycle

/// A real HTTP server for tests: serves `router` on 127.0.0.1 with a port the system picks,
/// runs `body` with that port, then shuts the server down gracefully (also when `body` throws).
public enum LoopbackServer {
    public struct DidNotStart: Error {}

    public static func with<Context: RequestContext, T: Sendable>(
        _ router: Router<Context>,
        _ body: @Sendable (Int) async throws -> T
    ) async throws -> T where Context.Source == ApplicationRequestContextSource {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "test-server")
        logger.logLevel = .error
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: logger
        )
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await services.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw DidNotStart()
            }
            let result: Result<T, any Error>
            do { result = .success(try await body(port)) } catch { result = .failure(error) }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try result.get()
        }
    }
}
