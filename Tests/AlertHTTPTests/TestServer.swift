import AlertTestSupport
import HTTPTypes
import Hummingbird

/// A real HTTP/1.1 receiver on 127.0.0.1 with an ephemeral port, for the client tests.
///
/// Routes: `GET /hello`; `POST|PUT|PATCH|DELETE /echo` (body back, request headers in
/// `x-got-*` response headers); `GET /status/{code}?retry-after=N`;
/// `GET /n/{i}` (body `i`); `GET /moved` (302 to `/hello`); `GET /sleep` (1 s, longer than the tests' timeouts).
enum TestServer {
    /// Runs `body` with the port of a running server, then shuts the server down gracefully.
    static func with<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        try await LoopbackServer.with(router(), body)
    }

    private static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("hello") { _, _ in
            Response(
                status: .ok, headers: [.init("X-Test")!: "yes", .contentType: "text/plain"],
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
        router.get("moved") { _, _ in
            Response(status: .found, headers: [.location: "/hello"])
        }
        router.get("n/:i") { _, context in
            String(try context.parameters.require("i"))
        }
        return router
    }
}
