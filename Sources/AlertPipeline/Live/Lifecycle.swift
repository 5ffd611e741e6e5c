import Logging
import ServiceLifecycle
import Synchronization

/// Long-running commands run as a swift-service-lifecycle `Service`: SIGTERM (what systemd
/// sends) and SIGINT (Ctrl-C) start a graceful shutdown, which cancels `body`; `body` then
/// finishes its work in hand (the pipeline delivers every alert it made) and returns.
public enum Lifecycle {
    public static func run<T: Sendable>(logger: Logger, _ body: @escaping @Sendable () async -> T) async throws -> T {
        let service = BodyService(body: body)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        return service.result.withLock { $0! }
    }

    /// Runs `body`, cancelling it after `duration` when one is given.
    public static func limited<T: Sendable>(
        to duration: Duration?, _ body: @escaping @Sendable () async -> T
    ) async -> T {
        guard let duration else { return await body() }
        return await withTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: duration)
                return nil
            }
            var result: T?
            while let next = await group.next() {
                if let value = next {
                    result = value
                    group.cancelAll()
                } else if result == nil {
                    group.cancelAll() // time is up: cancel the body and wait for what it returns
                }
            }
            return result!
        }
    }
}

private final class BodyService<T: Sendable>: Service {
    let body: @Sendable () async -> T
    let result = Mutex<T?>(nil)

    init(body: @escaping @Sendable () async -> T) {
        self.body = body
    }

    func run() async throws {
        let body = self.body
        let value = await cancelWhenGracefulShutdown { await body() }
        result.withLock { $0 = value }
    }
}
