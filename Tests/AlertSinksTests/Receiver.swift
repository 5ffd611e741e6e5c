import AlertTestSupport
import HTTPTypes
import Hummingbird
import Synchronization

/// A real HTTP/1.1 webhook receiver on 127.0.0.1 with an ephemeral port that records every
/// request it gets (the pattern of `AlertHTTPTests/TestServer`).
///
/// Routes (any of POST/PUT/PATCH): `/hook/{anything}` 200; `/status/{code}?retry-after=N`;
/// `/sleep/{ms}` answers 200 after that long; `/flaky/{n}/{anything}?retry-after=N` answers 503
/// (with that `Retry-After`) to the first `n` requests of its path, then 200.
final class Receiver: Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        /// Names lower-cased.
        var headers: [String: String]
        var body: [UInt8]
        /// When it arrived.
        var at: ContinuousClock.Instant

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let storage = Mutex<[Request]>([])
    private let refused = Mutex<[String: Int]>([:])
    var requests: [Request] { storage.withLock { $0 } }

    /// Runs `body` with the receiver and its port, then shuts the server down gracefully.
    static func with<T: Sendable>(_ body: @Sendable (Receiver, Int) async throws -> T) async throws -> T {
        let receiver = Receiver()
        return try await LoopbackServer.with(receiver.router()) { port in try await body(receiver, port) }
    }

    private func record(_ request: Hummingbird.Request) async throws {
        let body = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let recorded = Request(
            method: request.method.rawValue, path: request.uri.path, headers: headers,
            body: Array(body.readableBytesView), at: .now)
        storage.withLock { $0.append(recorded) }
    }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.post, .put, .patch] {
            router.on("hook/**", method: method) { [self] request, _ in
                try await record(request)
                return Response(status: .ok)
            }
            for pattern in ["status/:code", "status/:code/**"] {
                router.on(RouterPath(pattern), method: method) { [self] request, context in
                    try await record(request)
                    let code = try context.parameters.require("code", as: Int.self)
                    var headers: HTTPFields = [:]
                    if let retryAfter = request.uri.queryParameters["retry-after"] {
                        headers[.retryAfter] = String(retryAfter)
                    }
                    return Response(status: .init(code: code), headers: headers)
                }
            }
            router.on("flaky/:n/**", method: method) { [self] request, context in
                try await record(request)
                let n = try context.parameters.require("n", as: Int.self)
                let path = request.uri.path
                let refuse = refused.withLock { counts in
                    counts[path, default: 0] += 1
                    return counts[path, default: 0] <= n
                }
                var headers: HTTPFields = [:]
                if refuse, let retryAfter = request.uri.queryParameters["retry-after"] {
                    headers[.retryAfter] = String(retryAfter)
                }
                return Response(status: refuse ? .serviceUnavailable : .ok, headers: headers)
            }
            for pattern in ["sleep/:ms", "sleep/:ms/**"] {
                router.on(RouterPath(pattern), method: method) { [self] request, context in
                    try await record(request)
                    let ms = try context.parameters.require("ms", as: Int.self)
                    try await Task.sleep(for: .milliseconds(ms))
                    return Response(status: .ok)
                }
            }
        }
        return router
    }
}
