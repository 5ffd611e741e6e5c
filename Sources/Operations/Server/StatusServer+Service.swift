import ServiceLifecycle

/// The status server as a service: it serves until the group's graceful shutdown reaches it,
/// then stops. A daemon calls `start()` before the group runs, so an address that cannot be
/// bound ends the run before the feed is touched; `run()` binds only if that was not done.
extension StatusServer: Service {
    public func run() async throws {
        if !isRunning { _ = try await start() }
        try? await gracefulShutdown()
        await stop()
    }
}
