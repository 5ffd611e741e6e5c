import Hummingbird
import Logging
import ServiceLifecycle

/// A webhook receiver on 127.0.0.1 (ephemeral port): `POST /hook` reads the body and answers 204.
enum Receiver {
    static func run<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "http-benchmark")
        logger.logLevel = .error
        let router = Router()
        router.post("hook") { request, _ -> HTTPResponse.Status in
            _ = try await request.body.collect(upTo: 1 << 16)
            return .noContent
        }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: {
                portSink.yield($0.localAddress?.port ?? 0); portSink.finish()
            },
            logger: logger
        )
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await services.run(); return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { fatalError("receiver did not start") }
            let result = try await body(port)
            await services.triggerGracefulShutdown()
            return result
        }
    }
}
