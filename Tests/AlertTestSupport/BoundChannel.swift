import NIOCore
import NIOPosix
import Synchronization

/// The listening channel of a raw-NIO test server on 127.0.0.1: bound once by `bind`, closed by
/// `close` (at most once, from any task).
final class BoundChannel: Sendable {
    private let channel = Mutex<(any Channel)?>(nil)

    /// Binds `bootstrap` to 127.0.0.1 on a free port; returns the port.
    func bind(_ bootstrap: ServerBootstrap) async throws -> Int {
        let server = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        channel.withLock { $0 = server }
        return server.localAddress?.port ?? 0
    }

    func close() async {
        let server = channel.withLock { c in
            defer { c = nil }
            return c
        }
        try? await server?.close()
    }
}
