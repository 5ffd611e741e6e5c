import Synchronization

/// What the exchange has done so far, for tests and the CLI's summary.
public struct ExchangeStats: Sendable, Equatable {
    /// Websocket connections accepted (upgrades completed).
    public var connectionsAccepted = 0
    /// Websocket connections open now.
    public var connectionsOpen = 0
    /// Connections that started following prices: BTSE's `coinIndex` subscriptions, and look-alike
    /// connections' first market (again after unsubscribing from all).
    public var subscriptions = 0
    /// Price frames written to clients: BTSE's coinIndex frames and the look-alikes' ticker
    /// messages (one per client per message).
    public var framesSent = 0
    /// Invalid frames written in place of price frames (one per client per frame).
    public var invalidFramesSent = 0
    /// Connections closed by the `dropEvery` fault (or `dropAllConnections()`).
    public var connectionsDropped = 0
    /// REST requests received, including those answered with 429.
    public var restRequests = 0
    /// REST requests answered with 429.
    public var restRejected = 0
    /// Price steps produced by the source (sent, silenced or not).
    public var priceSteps = 0

    public init() {}
}

/// The counters behind `ExchangeStats`, shared by the handlers.
final class StatsCounter: Sendable {
    private let stats = Mutex(ExchangeStats())

    @discardableResult
    func update<Result: Sendable>(_ change: (inout ExchangeStats) -> Result) -> Result {
        stats.withLock { change(&$0) }
    }

    var snapshot: ExchangeStats { stats.withLock { $0 } }
}
