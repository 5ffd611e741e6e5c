import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A webhook receiver on 127.0.0.1 that checks every request's Standard Webhooks signature
/// (HMAC-SHA256 over `id.timestamp.body` with a raw secret, Docs/sinks.md#signing) and records
/// each signed arrival as (`webhook-id`, sink), the sink being the last path component
/// (`POST /hook/NAME`), in arrival order with its instant. Every request is answered 200; a
/// request whose signature does not verify is counted apart and not recorded.
///
/// A test waits on arrivals (`wait(until:)` re-checks its condition at every arrival): no
/// polling, no sleeps.
public final class SignedWebhookReceiver: Sendable {
    public struct Arrival: Sendable, Hashable {
        public var id: String
        public var sink: String
        public var at: ContinuousClock.Instant
        /// The sender's port: one connection's requests share it (to tell a request sent again
        /// on its connection from a second sender).
        public var peer: Int?
    }

    /// A request's context with the port it came from.
    struct PeerContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let peer: Int?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            peer = source.channel.remoteAddress?.port
        }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var what: String
        public var arrivals: Int
        public var description: String { "webhook receiver: \(what) did not come in time (\(arrivals) arrivals)" }
    }

    /// What a waiting condition looks at: every arrival in order, and how many times each
    /// (id, sink) arrived.
    public struct Seen: Sendable {
        public var arrivals: [Arrival] = []
        public var counts: [Pair: Int] = [:]
    }

    private struct Waiter {
        var check: @Sendable (Seen) -> Bool
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var seen = Seen()
        var unsigned = 0
        var waiters: [Int: Waiter] = [:]
        var next = 0
    }

    private let state = Mutex(State())
    let key: [UInt8]

    /// `secret`: the raw signing secret the sinks are given (its UTF-8 bytes are the key).
    public init(secret: String) {
        key = Array(secret.utf8)
    }

    /// Serves on a free port while `body` runs with it.
    public func with<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router(context: PeerContext.self)
        router.post("hook/:sink") { request, context -> Response in
            let sink = try context.parameters.require("sink")
            let body = try await request.body.collect(upTo: 1 << 20)
            self.received(request.headers, body: Array(buffer: body), sink: sink, peer: context.peer)
            return Response(status: .ok)
        }
        return try await LoopbackServer.with(router, body)
    }

    public var arrivals: [Arrival] { state.withLock { $0.seen.arrivals } }
    /// Requests whose signature was missing or wrong.
    public var unsigned: Int { state.withLock { $0.unsigned } }

    /// Suspends until `condition` holds of the arrivals so far (checked now and at every
    /// arrival), at most `timeout`.
    public func wait(
        _ what: String, timeout: Duration = .seconds(120), until condition: @escaping @Sendable (Seen) -> Bool
    ) async throws {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.resolve(id, .failure(TimedOut(what: what, arrivals: self?.arrivals.count ?? 0)))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let met = state.withLock { state in
                    if condition(state.seen) { return true }
                    state.waiters[id] = Waiter(check: condition, continuation: continuation)
                    return false
                }
                if met { continuation.resume() } else if Task.isCancelled { resolve(id, .failure(CancellationError())) }
            }
        } onCancel: {
            resolve(id, .failure(CancellationError()))
        }
    }

    /// Waits until every (id, sink) of `expected` has arrived at least once.
    public func waitForAll(_ expected: Set<Pair>, timeout: Duration = .seconds(120)) async throws {
        // The count first: the whole comparison runs only once enough distinct pairs arrived.
        try await wait("\(expected.count) deliveries", timeout: timeout) { seen in
            seen.counts.count >= expected.count && expected.allSatisfy { seen.counts[$0] != nil }
        }
    }

    public struct Pair: Sendable, Hashable, Comparable, CustomStringConvertible {
        public var id: String
        public var sink: String
        public init(id: String, sink: String) {
            self.id = id
            self.sink = sink
        }
        public var description: String { "\(sink) \(id)" }
        public static func < (a: Pair, b: Pair) -> Bool { (a.sink, a.id) < (b.sink, b.id) }
    }

    private func resolve(_ id: Int, _ result: Result<Void, any Error>) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(with: result)
    }

    private func received(_ headers: HTTPFields, body: [UInt8], sink: String, peer: Int?) {
        let id = headers[HTTPField.Name("webhook-id")!]
        let verified = id.map { verify(id: $0, headers: headers, body: body) } ?? false
        let ready: [Waiter] = state.withLock { state in
            guard verified, let id else {
                state.unsigned += 1
                return []
            }
            let arrival = Arrival(id: id, sink: sink, at: .now, peer: peer)
            state.seen.arrivals.append(arrival)
            state.seen.counts[arrival.pair, default: 0] += 1
            let ready = state.waiters.filter { $0.value.check(state.seen) }
            for key in ready.keys { state.waiters[key] = nil }
            return Array(ready.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Standard Webhooks, computed here independently of the sink's code.
    private func verify(id: String, headers: HTTPFields, body: [UInt8]) -> Bool {
        guard let timestamp = headers[HTTPField.Name("webhook-timestamp")!],
            let signature = headers[HTTPField.Name("webhook-signature")!]
        else { return false }
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array("\(id).\(timestamp).".utf8) + body, using: SymmetricKey(data: key))
        let expected = "v1," + Data(mac).base64EncodedString()
        return signature.split(separator: " ").contains { $0 == expected }
    }
}

extension SignedWebhookReceiver.Arrival {
    public var pair: SignedWebhookReceiver.Pair { .init(id: id, sink: sink) }
}
