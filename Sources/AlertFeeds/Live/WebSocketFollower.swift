import AlertHTTP
import AlertModel
import Logging
import Platform
import Synchronization

/// The websocket side of `FeedRunner`: one slot per element of `WebSocketPlan.connections`,
/// each connecting, subscribing, keeping alive and reading frames; on any end (closed, error,
/// a sequence gap, or silence longer than `staleAfter`) it backs off with jitter and
/// reconnects, forever. A connection due for replacement (its `lifetime` is up, or the server
/// announced its end) is replaced make-before-break: the old one stays open until the new one
/// delivers prices.
extension FeedRunner {
    struct Silent: Error {}
    /// The connection's replacement delivers prices: this one is closed.
    struct Replaced: Error {}
    /// A frame's sequence number is not one more than the one before: messages were lost.
    struct SequenceGap: Error, CustomStringConvertible {
        var expected: Int64
        var got: Int64
        var description: String {
            got > expected
                ? "sequence gap: expected message \(expected), got \(got) (\(got - expected) lost); subscribing afresh"
                : "sequence went back from \(expected - 1) to \(got); subscribing afresh"
        }
    }

    func follow(
        _ plan: WebSocketPlan, health: FeedHealth, emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        let repeats = plan.dropsRepeats ? RepeatFilter() : nil
        let count = plan.connections.count
        try await withThrowingDiscardingTaskGroup { group in
            for (index, subscribe) in plan.connections.enumerated() {
                let url = Endpoint.display(plan.url) + (count > 1 ? " (connection \(index + 1) of \(count))" : "")
                group.addTask {
                    try await followSlot(
                        plan, subscribe: subscribe, url: url, health: health, repeats: repeats, emit: emit)
                }
            }
        }
    }

    private enum SlotEvent: Sendable {
        /// Connection `id` is due for replacement.
        case replace(Int)
        /// Connection `id` ended for `reason` (nil: cancelled), having delivered prices or not.
        case ended(Int, reason: String?, delivered: Bool)
    }

    /// One connection slot: the connection, its replacements and its reconnects.
    private func followSlot(
        _ plan: WebSocketPlan, subscribe: [String], url: String, health: FeedHealth, repeats: RepeatFilter?,
        emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        var backoff = Backoff(base: options.backoffBase, cap: options.backoffMaximum)
        let began = health.now()
        let (events, sink) = AsyncStream.makeStream(of: SlotEvent.self)
        try await withThrowingDiscardingTaskGroup { group in
            var current = 0
            // Connections opened before the current one that may still be open: each is closed
            // once a later one delivers prices.
            var older: [Handover] = []
            func launch() {
                current += 1
                let id = current
                let handover = Handover()
                let previous = older.filter { !$0.isRetired }
                older = previous + [handover]
                group.addTask {
                    let delivered = Counter()
                    let reason = await attempt(
                        plan, subscribe: subscribe, url: url, health: health, repeats: repeats,
                        handover: handover, previous: previous, delivered: delivered,
                        replace: { sink.yield(.replace(id)) }, emit: emit)
                    handover.retire()
                    sink.yield(.ended(id, reason: reason, delivered: delivered.value > 0))
                }
            }
            launch()
            for await event in events {
                switch event {
                case .replace(let id) where id == current:
                    logger.info("\(source.name): \(url): opening a replacement connection")
                    launch()
                case .ended(let id, let reason, let delivered) where id == current:
                    guard let reason else { throw CancellationError() }
                    if delivered { backoff.reset() }
                    let wait = backoff.next()
                    await emit(.disconnected(reason: "\(url): \(reason)", retryIn: wait))
                    // Connections that fail outright (refused, rejected) never stay up long enough
                    // for `watch`: the outage still makes the feed stale, counted from the last price.
                    if health.silence(since: began) >= options.staleAfter, let silence = health.declareStale() {
                        await emit(.stale(silentFor: silence))
                    }
                    try await options.clock.sleep(for: wait)
                    launch()
                default:
                    // A connection that was replaced, or whose replacement already took over.
                    break
                }
            }
            throw CancellationError()
        }
    }

    /// One connection until it ends: why it ended, nil when cancelled.
    private func attempt(
        _ plan: WebSocketPlan, subscribe: [String], url: String, health: FeedHealth, repeats: RepeatFilter?,
        handover: Handover, previous: [Handover], delivered: Counter, replace: @escaping @Sendable () -> Void,
        emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async -> String? {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await connectOnce(
                        plan, subscribe: subscribe, url: url, health: health, repeats: repeats, handover: handover,
                        previous: previous, delivered: delivered, replace: replace, emit: emit)
                }
                group.addTask { try await watch(health, emit: emit) }
                group.addTask {
                    try await handover.retired()
                    throw Replaced()
                }
                try await group.next()
                group.cancelAll()
            }
            return "connection closed by the server"
        } catch is Silent {
            return "no prices for \(options.staleAfter.milliseconds / 1000) s"
        } catch is Replaced {
            return "replaced by a newer connection"
        } catch is CancellationError {
            return nil
        } catch {
            if Task.isCancelled { return nil }
            if case FeedSocket.Failure.frameTooLarge = error { await emit(.dropped(reason: "\(url): \(error)")) }
            return "\(error)"
        }
    }

    private func connectOnce(
        _ plan: WebSocketPlan, subscribe: [String], url: String, health: FeedHealth, repeats: RepeatFilter?,
        handover: Handover, previous: [Handover], delivered: Counter, replace: @escaping @Sendable () -> Void,
        emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        let socket = FeedSocket(
            url: plan.url, maxFrameSize: Self.maxFrameSize,
            handshakeTimeout: options.handshakeLimit, logger: logger)
        let clock = options.clock
        try await socket.run { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let ping = plan.ping {
                    group.addTask {
                        while true {
                            try await clock.sleep(for: plan.pingInterval)
                            try await outbound.write(.text(ping))
                        }
                    }
                }
                if let lifetime = plan.lifetime {
                    group.addTask {
                        try await clock.sleep(for: lifetime)
                        replace()
                        // Stays open until the replacement takes over (`Handover`).
                        try await handover.retired()
                        throw Replaced()
                    }
                }
                group.addTask {
                    // Reading starts at once: an exchange that answers the first subscribe while
                    // later ones are still paced out is read as it answers.
                    var lastSequence: Int64?
                    var announced = false
                    for try await message in inbound.messages(maxSize: Self.maxFrameSize) {
                        let bytes: [UInt8]
                        switch message {
                        case .text(let text): bytes = Array(text.utf8)
                        case .binary(var buffer): bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                        }
                        let live = plan.read(bytes, Wallclock.millis())
                        var frame = live.frame
                        if case .ticks(let ticks) = frame, !ticks.isEmpty {
                            delivered.increment()
                            if delivered.value == 1 { for older in previous { older.retire() } }
                            if let repeats { frame = .ticks(repeats.fresh(ticks)) }
                        }
                        await deliver(frame, health: health, emit: emit)
                        if live.replaceConnection, !announced {
                            announced = true
                            logger.notice("\(source.name): \(url): the server announced the end of this connection")
                            replace()
                        }
                        if let sequence = live.sequence {
                            if let last = lastSequence, sequence != last &+ 1 {
                                sequenceGaps.increment()
                                throw SequenceGap(expected: last &+ 1, got: sequence)
                            }
                            lastSequence = sequence
                        }
                    }
                }
                for (index, message) in subscribe.enumerated() {
                    if index > 0, plan.subscribePace > .zero { try await clock.sleep(for: plan.subscribePace) }
                    try await outbound.write(.text(message))
                }
                await emit(.connected(url: url + Self.subscribed(plan)))
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// What a connection's `connected` line adds once its subscribe messages are sent: how many
    /// markets the plan subscribes (`: 600 markets subscribed`; over several connections, the
    /// whole plan's count and theirs).
    static func subscribed(_ plan: WebSocketPlan) -> String {
        guard let markets = plan.markets else { return "" }
        let count = plan.connections.count
        return count > 1
            ? ": its share of \(markets) markets subscribed over \(count) connections"
            : ": \(markets) markets subscribed"
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
    ///
    /// A round that comes later than due by more than a whole step means the process was paused
    /// (SIGSTOP, a paused VM) or starved: prices that came meanwhile may wait unread in the
    /// socket, so that round judges nothing and the reads get a step to deliver them. The round
    /// after it judges whatever its timing, so a feed silent for real still goes stale.
    func watchSilence(
        _ health: FeedHealth, limit: Duration, emit: @escaping @Sendable (FeedEvent) async -> Void,
        then: () throws -> Void = {}
    ) async throws {
        let start = health.now()
        let step = min(limit / 4, .seconds(1))
        var spared = false
        while true {
            let due = health.now() + step
            try await health.sleep(for: step)
            if !spared, health.now() - due > step {
                spared = true
                continue
            }
            spared = false
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

/// Tells a connection that its replacement took over: `retired()` returns (in every task
/// waiting on it) once `retire()` was called, at once if it already was.
final class Handover: Sendable {
    private struct State {
        var retired = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var isRetired: Bool { state.withLock { $0.retired } }

    func retire() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.retired = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once retired; throws `CancellationError` when the waiting task is cancelled.
    func retired() async throws {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now: Result<Void, any Error>? = state.withLock { s in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if s.retired { return .success(()) }
                    s.waiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiters.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }
}

/// The last delivered tick of each symbol, shared by the connections of one feed: a tick that
/// is older, or has the same time and price, is a repeat (a replacement connection's first
/// prices, a snapshot after a resubscribe) and is not delivered again.
final class RepeatFilter: Sendable {
    private let last = Mutex<[String: (time: Int64, price: Double)]>([:])

    func fresh(_ ticks: [Tick]) -> [Tick] {
        last.withLock { last in
            ticks.filter { tick in
                if let seen = last[tick.symbol],
                    tick.time < seen.time || (tick.time == seen.time && tick.price == seen.price)
                {
                    return false
                }
                last[tick.symbol] = (tick.time, tick.price)
                return true
            }
        }
    }
}
