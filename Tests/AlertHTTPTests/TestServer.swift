import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle

/// A real HTTP/1.1 receiver on 127.0.0.1 with an ephemeral port, for the client tests.
///
/// Routes: `GET /hello`; `POST|PUT|PATCH|DELETE /echo` (body back, request headers in
/// `x-got-*` response headers); `GET /status/{code}?retry-after=N`;
/// `GET /n/{i}` (body `i`); `GET /sleep` (1 s, longer than the tests' timeouts).
enum TestServer {
    /// Runs `body` with the port of a running server, then shuts the server down gracefully.
    static func with<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "test-server")
        logger.logLevel = .error
        let app = Application(
            router: router(),
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
                throw ServerDidNotStart()
            }
            let result: Result<T, any Error>
            do { result = .success(try await body(port)) } catch { result = .failure(error) }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try result.get()
        }
    }

    struct ServerDidNotStart: Error {}

    private static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("hello") { _, _ in
            Response(status: .ok, headers: [.init("X-Test")!: "yes", .contentType: "text/plain"],
                     body: .init(byteBuffer: ByteBuffer(string: "hello, world")))
        }
        for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
            router.on("echo", method: method) { request, _ in
                let body = try await request.body.collect(upTo: 1 << 20)
                var headers: HTTPFields = [.init("X-Got-Method")!: request.method.rawValue]
                headers[.init("X-Got-Custom")!] = request.headers[.init("X-Custom")!] ?? "-"
                headers[.init("X-Got-Content-Type")!] = request.headers[.contentType] ?? "-"
                headers[.init("X-Got-Expect")!] = request.headers[.expect] ?? "-"
                headers[.init("X-Got-User-Agent")!] = request.headers[.userAgent] ?? "-"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
            }
        }
        router.get("status/:code") { request, context in
            let code = try context.parameters.require("code", as: Int.self)
            var headers: HTTPFields = [:]
            if let retryAfter = request.uri.queryParameters["retry-after"] {
                headers[.retryAfter] = String(retryAfter)
            }
            return Response(status: .init(code: code), headers: headers)
        }
        router.get("sleep") { _, _ in
            try await Task.sleep(for: .seconds(1))
            return "late"
        }
        router.get("n/:i") { _, context in
            String(try context.parameters.require("i"))
        }
        return router
    }
}
