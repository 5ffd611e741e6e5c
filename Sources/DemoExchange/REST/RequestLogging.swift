import Hummingbird
import Synchronization

/// The REST requests the exchange received, as `path?query`, so tests can see what a client
/// fetched (and that it did not fetch again). Keeps the newest `limit`.
final class RequestLog: Sendable {
    private let lines = Mutex<[String]>([])
    let limit = 10_000

    func append(_ line: String) {
        lines.withLock { lines in
            if lines.count >= limit { lines.removeFirst(lines.count - limit + 1) }
            lines.append(line)
        }
    }

    var entries: [String] { lines.withLock { $0 } }
}

/// Records every REST request (websocket upgrades excepted) in a `RequestLog`.
struct RequestLogging<Context: RequestContext>: RouterMiddleware {
    let log: RequestLog

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if !request.uri.path.hasPrefix("/ws/") { log.append(request.uri.description) }
        return try await next(request, context)
    }
}
