import AlertHTTP
import AlertModel
import Logging
import Platform
import Synchronization

/// The websocket side of `FeedRunner`: connect, subscribe, keep alive, read frames; on any
/// end (closed, error, or silence longer than `staleAfter`) back off with jitter and
/// reconnect, forever.
extension FeedRunner {
    struct Silent: Error {}

    func follow(
        _ plan: WebSocketPlan, health: FeedHealth, emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        var backoff = Backoff(base: options.backoffBase, cap: options.backoffMaximum)
        let url = Endpoint.display(plan.url)
        let began = ContinuousClock.now
        while true {
            let delivered = Counter()
            var reason: String
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await connectOnce(plan, url: url, health: health, delivered: delivered, emit: emit)
                    }
                    group.addTask { try await watch(health, emit: emit) }
                    try await group.next()
                    group.cancelAll()
                }
                reason = "connection closed by the server"
            } catch is Silent {
                reason = "no prices for \(options.staleAfter.milliseconds / 1000) s"
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                reason = "\(error)"
                if case FeedSocket.Failure.frameTooLarge = error { await emit(.dropped(reason: "\(url): \(reason)")) }
            }
            if delivered.value > 0 { backoff.reset() }
            let wait = backoff.next()
            await emit(.disconnected(reason: "\(url): \(reason)", retryIn: wait))
            // Connections that fail outright (refused, rejected) never stay up long enough for
            // `watch`: the outage still makes the feed stale, counted from the last price.
            if health.silence(since: began) >= options.staleAfter, let silence = health.declareStale() {
                await emit(.stale(silentFor: silence))
            }
            try await options.clock.sleep(for: wait)
        }
    }

    private func connectOnce(
        _ plan: WebSocketPlan, url: String, health: FeedHealth, delivered: Counter,
        emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        let socket = FeedSocket(
            url: plan.url, maxFrameSize: Self.maxFrameSize,
            handshakeTimeout: options.handshakeLimit, logger: logger)
        try await socket.run { inbound, outbound, _ in
            for message in plan.subscribe { try await outbound.write(.text(message)) }
            await emit(.connected(url: url))
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let ping = plan.ping {
                    group.addTask {
                        while true {
                            try await Task.sleep(for: plan.pingInterval)
                            try await outbound.write(.text(ping))
                        }
                    }
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: Self.maxFrameSize) {
                        let bytes: [UInt8]
                        switch message {
                        case .text(let text): bytes = Array(text.utf8)
                        case .binary(var buffer): bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                        }
                        let frame = plan.parse(bytes, Wallclock.millis())
                        if case .ticks(let ticks) = frame, !ticks.isEmpty { delivered.increment() }
                        await deliver(frame, health: health, emit: emit)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// The longest frame (and message) a feed takes: far above any exchange's, and small enough
    /// that one in memory is harmless. A longer one ends the connection unread.
    static let maxFrameSize = 1 << 24

    /// Throws `Silent` (ending the connection) once no price came for `staleAfter`.
    /// The feed is announced stale once; every connection that stays silent as long is dropped.
    private func watch(_ health: FeedHealth, emit: @escaping @Sendable (FeedEvent) async -> Void) async throws {
        try await watchSilence(health, limit: options.staleAfter, emit: emit) { throw Silent() }
    }

    /// Checks `health` every quarter of `limit` (at most every second) and, once no price came
    /// for `limit` since the call, announces the feed stale (once) and runs `then`; until cancelled.
    func watchSilence(
        _ health: FeedHealth, limit: Duration, emit: @escaping @Sendable (FeedEvent) async -> Void,
        then: () throws -> Void = {}
    ) async throws {
        let start = ContinuousClock.now
        let step = min(limit / 4, .seconds(1))
        while true {
            try await Task.sleep(for: step)
            if health.silence(since: start) >= limit {
                if let silence = health.declareStale() { await emit(.stale(silentFor: silence)) }
                try then()
            }
        }
    }
}

/// A count shared between a connection and its supervisor.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
