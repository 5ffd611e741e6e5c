import AlertModel
import AlertPolicy
import AlertSinks
import Synchronization

/// A sink that keeps what it receives, for tests of the engine and the dispatcher. It lives in
/// the `AlertSinksTesting` library, beside the production sinks rather than in them (as
/// swift-log ships its in-memory handler in `InMemoryLogging`). It can be told to fail.
public final class InMemorySink: Sink {
    public let name: String

    private struct State {
        var delivered: [Alert] = []
        var deliveries: [Delivery] = []
        var attempts = 0
        var failure: SinkResult?
    }

    private let state: Mutex<State>

    /// `failure`: what every `send` returns instead of `.delivered` (nil: deliver).
    public init(name: String, failure: SinkResult? = nil) {
        self.name = name
        self.state = Mutex(State(failure: failure))
    }

    /// Alerts delivered, in order, a digest's events each (failed attempts are not recorded here).
    public var alerts: [Alert] { state.withLock { $0.delivered } }

    /// Deliveries (events and digests) delivered, in order.
    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// Number of `send` calls, delivered or not.
    public var attempts: Int { state.withLock { $0.attempts } }

    /// From now on every `send` returns `result`; nil makes the sink deliver again.
    public func fail(with result: SinkResult?) {
        state.withLock { $0.failure = result }
    }

    public func send(_ alert: Alert) async -> SinkResult {
        await send(.event(alert))
    }

    /// One attempt for the whole delivery: a digest is kept or refused as one.
    public func send(_ delivery: Delivery) async -> SinkResult {
        state.withLock { state in
            state.attempts += 1
            if let failure = state.failure, failure != .delivered { return failure }
            state.delivered += delivery.events
            state.deliveries.append(delivery)
            return .delivered
        }
    }
}
