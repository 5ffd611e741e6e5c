import Hummingbird

/// The `status429` fault: the first N REST requests get `429 Too Many Requests` with
/// `Retry-After: 1`, so a client's back-off can be seen working. Websocket upgrades pass.
struct RateLimitFault<Context: RequestContext>: RouterMiddleware {
    let faults: FaultSettings
    let stats: StatsCounter

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if request.uri.path.hasPrefix("/ws/") { return try await next(request, context) }
        let limit = faults.current.status429
        let reject = stats.update { stats in
            stats.restRequests += 1
            guard stats.restRejected < limit else { return false }
            stats.restRejected += 1
            return true
        }
        guard reject else { return try await next(request, context) }
        return Response(
            status: .tooManyRequests,
            headers: [.retryAfter: "1", .contentType: "application/json"],
            body: .init(
                byteBuffer: ByteBuffer(string: #"{"code":429,"msg":"Too Many Requests (demo exchange fault)"}"#)))
    }
}
