import Synchronization

/// What the outside world may ask about the feed: is it up, and are prices flowing? Fed by the
/// pipeline's feed events; read by `/healthz` (`health`) and the systemd watchdog (`freshness`).
///
/// Two questions, because they answer different people. A load balancer or probe wants to know
/// right now whether alerts can fire (`health`: fresh *and* connected). systemd's watchdog must
/// only restart a daemon that is wedged, not one riding out a reconnect of a few seconds
/// (`freshness`: prices within the stale limit, whatever the connection is doing right now).
public final class FeedStatus: Sendable {
    public enum Verdict: Sendable, Equatable {
        case healthy
        case unhealthy(reason: String)

        public var isHealthy: Bool { self == .healthy }
    }

    private struct State {
        var started: ContinuousClock.Instant
        var markets: Int?
        /// When the feed first connected (startup complete).
        var readyAt: ContinuousClock.Instant?
        var connected = false
        var disconnectReason: String?
        var staleSince: ContinuousClock.Instant?
        var lastPrices: ContinuousClock.Instant?
        /// Since when every tick that came was refused as timed ahead of the local clock.
        var refusedSince: ContinuousClock.Instant?
        var stopping = false
    }

    /// No prices for this long is a stale feed (the feed runner's own limit).
    public let staleAfter: Duration
    private let state: Mutex<State>
    /// A fault that ends the run (the state folder deleted under it); nil: none.
    private let fatal = Mutex<String?>(nil)
    /// Why alerts cannot be written to the outbox right now (nil: they can).
    private let outboxFailure = Mutex<@Sendable () -> String?>({ nil })

    public init(staleAfter: Duration, now: ContinuousClock.Instant = .now) {
        self.staleAfter = staleAfter
        state = Mutex(State(started: now))
    }

    // MARK: What happened

    public func marketsLoaded(_ count: Int) {
        state.withLock { $0.markets = count }
    }

    /// Returns true the first time: startup is complete.
    @discardableResult
    public func connected(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in
            s.connected = true
            s.disconnectReason = nil
            guard s.readyAt == nil else { return false }
            s.readyAt = now
            return true
        }
    }

    public func disconnected(reason: String) {
        state.withLock { s in
            s.connected = false
            s.disconnectReason = reason
        }
    }

    public func stale(now: ContinuousClock.Instant = .now) {
        state.withLock { $0.staleSince = $0.staleSince ?? now }
    }

    public func pricesArrived(now: ContinuousClock.Instant = .now) {
        state.withLock { s in
            s.lastPrices = now
            s.staleSince = nil
        }
    }

    /// A frame's ticks were evaluated: `allRefused` when every one of them was refused as timed
    /// ahead of the local clock (Docs/rules.md#ticks-from-the-future). Prices that come but
    /// are all refused leave the rules as blind as no prices: after `staleAfter` of them,
    /// `health` says so.
    public func ticksEvaluated(allRefused: Bool, now: ContinuousClock.Instant = .now) {
        state.withLock { s in
            s.refusedSince = allRefused ? s.refusedSince ?? now : nil
        }
    }

    public func stopping() {
        state.withLock { $0.stopping = true }
    }

    /// A fault the run cannot go on with: `health` names it from now on (before anything else).
    public func failed(_ reason: String) {
        fatal.withLock { $0 = $0 ?? reason }
    }

    /// Where `health` asks whether alerts can be written to the outbox: `failure` returns why
    /// not, or nil when they can.
    public func watchOutbox(_ failure: @escaping @Sendable () -> String?) {
        outboxFailure.withLock { $0 = failure }
    }

    // MARK: Questions

    public var isReady: Bool { state.withLock { $0.readyAt != nil } }

    /// Seconds since the last prices arrived (since start while none has).
    public func secondsSinceLastPrices(now: ContinuousClock.Instant = .now) -> Double {
        state.withLock { Self.seconds(now - ($0.lastPrices ?? $0.started)) }
    }

    /// Prices arrive within `staleAfter` (the watchdog's question).
    public func freshness(now: ContinuousClock.Instant = .now) -> Verdict {
        state.withLock { freshness(of: $0, now: now) }
    }

    /// No fatal fault, fresh and connected, alerts written to the outbox, and not shutting down (`/healthz`'s
    /// question). An outbox that cannot be written does not withhold the watchdog: a restart
    /// would lose the alerts held in memory.
    public func health(now: ContinuousClock.Instant = .now) -> Verdict {
        let outbox = outboxFailure.withLock { $0 }()
        if let fatal = fatal.withLock({ $0 }) { return .unhealthy(reason: fatal) }
        return state.withLock { s in
            if s.stopping { return .unhealthy(reason: "stopping") }
            if let outbox { return .unhealthy(reason: "outbox: \(outbox)") }
            let fresh = freshness(of: s, now: now)
            guard fresh.isHealthy else { return fresh }
            if let since = s.refusedSince, now - since >= staleAfter {
                return .unhealthy(
                    reason:
                        "every tick for \(Int(Self.seconds(now - since))) s was timed more than --max-tick-skew ahead of the local clock"
                )
            }
            if !s.connected { return .unhealthy(reason: "disconnected: \(s.disconnectReason ?? "reconnecting")") }
            return .healthy
        }
    }

    private func freshness(of s: State, now: ContinuousClock.Instant) -> Verdict {
        guard let readyAt = s.readyAt else {
            return .unhealthy(
                reason: s.markets == nil ? "starting: loading the market list" : "starting: connecting to the feed")
        }
        let silence = now - (s.lastPrices ?? readyAt)
        if s.staleSince != nil || silence >= staleAfter {
            let why = s.connected ? "" : " (disconnected: \(s.disconnectReason ?? "reconnecting"))"
            return .unhealthy(reason: "stale: no prices for \(Int(Self.seconds(silence))) s\(why)")
        }
        return .healthy
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
