import Synchronization

/// What the outside world may ask about the feeds: are they up, and are prices flowing? Fed by
/// the pipeline's feed events, per feed (the `--source` feed and each rule-file source); read by
/// `/healthz` (`health`, `sources`) and the systemd watchdog (`freshness`).
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

    /// One feed's state: the `--source` feed's, or a rule-file source's (rules v3 §2).
    private struct Feed {
        let name: String
        let staleAfter: Duration
        let started: ContinuousClock.Instant
        var markets: Int?
        /// When this feed first connected.
        var readyAt: ContinuousClock.Instant?
        var connected = false
        var disconnectReason: String?
        var staleSince: ContinuousClock.Instant?
        var lastPrices: ContinuousClock.Instant?
        /// Since when every tick that came was refused as timed ahead of the local clock.
        var refusedSince: ContinuousClock.Instant?
    }

    private struct State {
        var started: ContinuousClock.Instant
        /// In the order they were added.
        var feeds: [Feed] = []
        /// When the first feed first connected (startup complete).
        var readyAt: ContinuousClock.Instant?
        var stopping = false

        mutating func update(_ name: String, _ change: (inout Feed) -> Void) {
            guard let i = feeds.firstIndex(where: { $0.name == name }) else { return }
            change(&feeds[i])
        }
    }

    private let state: Mutex<State>
    /// A fault that ends the run (the state folder deleted under it); nil: none.
    private let fatal = Mutex<String?>(nil)
    /// Why alerts cannot be written to the outbox right now (nil: they can).
    private let outboxFailure = Mutex<@Sendable () -> String?>({ nil })
    private let roles = Mutex<@Sendable () -> [(source: String, role: String)]>({ [] })

    /// With `staleAfter`, one feed named `""` is added, which the methods' default `feed` names
    /// (one feed, one status); without, feeds are added with `addFeed`.
    public init(staleAfter: Duration? = nil, now: ContinuousClock.Instant = .now) {
        state = Mutex(State(started: now))
        if let staleAfter { addFeed("", staleAfter: staleAfter, now: now) }
    }

    // MARK: Feeds

    /// A feed whose health counts from now on (`staleAfter`: its feed runner's own limit).
    /// Adding a name already there does nothing.
    public func addFeed(_ name: String, staleAfter: Duration, now: ContinuousClock.Instant = .now) {
        state.withLock { s in
            guard !s.feeds.contains(where: { $0.name == name }) else { return }
            s.feeds.append(Feed(name: name, staleAfter: staleAfter, started: now))
        }
    }

    /// A feed that was stopped (its source removed from the rule files): no longer counted.
    public func removeFeed(_ name: String) {
        state.withLock { $0.feeds.removeAll { $0.name == name } }
    }

    /// The feeds' names, in the order they were added.
    public var feedNames: [String] { state.withLock { $0.feeds.map(\.name) } }

    // MARK: What happened

    public func marketsLoaded(_ count: Int, feed: String = "") {
        state.withLock { $0.update(feed) { $0.markets = count } }
    }

    /// Returns true the first time any feed connects: startup is complete.
    @discardableResult
    public func connected(feed: String = "", now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in
            s.update(feed) { f in
                f.connected = true
                f.disconnectReason = nil
                f.readyAt = f.readyAt ?? now
            }
            guard s.readyAt == nil else { return false }
            s.readyAt = now
            return true
        }
    }

    public func disconnected(reason: String, feed: String = "") {
        state.withLock {
            $0.update(feed) { f in
                f.connected = false
                f.disconnectReason = reason
            }
        }
    }

    public func stale(feed: String = "", now: ContinuousClock.Instant = .now) {
        state.withLock { $0.update(feed) { $0.staleSince = $0.staleSince ?? now } }
    }

    public func pricesArrived(feed: String = "", now: ContinuousClock.Instant = .now) {
        state.withLock {
            $0.update(feed) { f in
                f.lastPrices = now
                f.staleSince = nil
            }
        }
    }

    /// A frame's ticks were evaluated: `allRefused` when every one of them was refused as timed
    /// ahead of the local clock (Docs/rules.md#ticks-from-the-future). Prices that come but
    /// are all refused leave the rules as blind as no prices: after `staleAfter` of them,
    /// `health` says so.
    public func ticksEvaluated(allRefused: Bool, feed: String = "", now: ContinuousClock.Instant = .now) {
        state.withLock { $0.update(feed) { $0.refusedSince = allRefused ? $0.refusedSince ?? now : nil } }
    }

    public func stopping() {
        state.withLock { $0.stopping = true }
    }

    /// A fault the run cannot go on with: `health` names it from now on (before anything else).
    public func failed(_ reason: String) {
        fatal.withLock { $0 = $0 ?? reason }
    }

    /// Where `/healthz` reads this instance's role per source when several share a store:
    /// (source, `leader (epoch N)` or `standby`), one line each.
    public func watchRoles(_ roles: @escaping @Sendable () -> [(source: String, role: String)]) {
        self.roles.withLock { $0 = roles }
    }

    /// This instance's role per source (none without several instances).
    public func roleLines() -> [(source: String, role: String)] {
        roles.withLock { $0 }()
    }

    /// Where `health` asks whether alerts can be written to the outbox: `failure` returns why
    /// not, or nil when they can.
    public func watchOutbox(_ failure: @escaping @Sendable () -> String?) {
        outboxFailure.withLock { $0 = failure }
    }

    // MARK: Questions

    public var isReady: Bool { state.withLock { $0.readyAt != nil } }

    /// Seconds since `feed`'s last prices arrived (since it was added while none have).
    public func secondsSinceLastPrices(feed: String = "", now: ContinuousClock.Instant = .now) -> Double {
        state.withLock { s in
            guard let f = s.feeds.first(where: { $0.name == feed }) else { return 0 }
            return Self.seconds(now - (f.lastPrices ?? f.started))
        }
    }

    /// Some feed's prices arrive within its `staleAfter` (the watchdog's question): a daemon
    /// with one exchange down is not wedged, and a restart would not bring that exchange back.
    public func freshness(now: ContinuousClock.Instant = .now) -> Verdict {
        state.withLock { s in
            let verdicts = s.feeds.map { (name: $0.name, verdict: freshness(of: $0, now: now)) }
            if verdicts.isEmpty || verdicts.contains(where: { $0.verdict.isHealthy }) {
                return verdicts.isEmpty ? .unhealthy(reason: "starting: loading the market list") : .healthy
            }
            return Self.summary(verdicts)
        }
    }

    /// No fatal fault, every feed fresh and connected, alerts written to the outbox, and not
    /// shutting down (`/healthz`'s question). With several feeds, an unhealthy one makes the
    /// whole unhealthy, named with its reason (`sources` gives each feed's own verdict). An
    /// outbox that cannot be written does not withhold the watchdog: a restart would lose the
    /// alerts held in memory.
    public func health(now: ContinuousClock.Instant = .now) -> Verdict {
        let outbox = outboxFailure.withLock { $0 }()
        if let fatal = fatal.withLock({ $0 }) { return .unhealthy(reason: fatal) }
        return state.withLock { s in
            if s.stopping { return .unhealthy(reason: "stopping") }
            if let outbox { return .unhealthy(reason: "outbox: \(outbox)") }
            guard !s.feeds.isEmpty else { return .unhealthy(reason: "starting: loading the market list") }
            let verdicts = s.feeds.map { (name: $0.name, verdict: health(of: $0, now: now)) }
            return verdicts.allSatisfy(\.verdict.isHealthy) ? .healthy : Self.summary(verdicts)
        }
    }

    /// Each feed's own `/healthz` verdict (fresh and connected), in the order they were added.
    public func sources(now: ContinuousClock.Instant = .now) -> [(name: String, verdict: Verdict)] {
        state.withLock { s in s.feeds.map { (name: $0.name, verdict: health(of: $0, now: now)) } }
    }

    /// One feed's verdict as it is; several feeds' as `2 of 3 sources unhealthy: a: why; b: why`.
    private static func summary(_ verdicts: [(name: String, verdict: Verdict)]) -> Verdict {
        if verdicts.count == 1 { return verdicts[0].verdict }
        let bad = verdicts.compactMap { v -> String? in
            guard case .unhealthy(let reason) = v.verdict else { return nil }
            return "\(v.name): \(reason)"
        }
        return .unhealthy(
            reason: "\(bad.count) of \(verdicts.count) sources unhealthy: \(bad.joined(separator: "; "))")
    }

    private func health(of f: Feed, now: ContinuousClock.Instant) -> Verdict {
        let fresh = freshness(of: f, now: now)
        guard fresh.isHealthy else { return fresh }
        if let since = f.refusedSince, now - since >= f.staleAfter {
            return .unhealthy(
                reason:
                    "every tick for \(Int(Self.seconds(now - since))) s was timed more than --max-tick-skew ahead of the local clock"
            )
        }
        if !f.connected { return .unhealthy(reason: "disconnected: \(f.disconnectReason ?? "reconnecting")") }
        return .healthy
    }

    private func freshness(of f: Feed, now: ContinuousClock.Instant) -> Verdict {
        guard let readyAt = f.readyAt else {
            return .unhealthy(
                reason: f.markets == nil ? "starting: loading the market list" : "starting: connecting to the feed")
        }
        let silence = now - (f.lastPrices ?? readyAt)
        if f.staleSince != nil || silence >= f.staleAfter {
            let why = f.connected ? "" : " (disconnected: \(f.disconnectReason ?? "reconnecting"))"
            return .unhealthy(reason: "stale: no prices for \(Int(Self.seconds(silence))) s\(why)")
        }
        return .healthy
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
