import Synchronization

/// Which lease covers what, when several `run`s share one store (Docs/postgres.md#several-instances):
/// every event and every engine-state row belongs to exactly one lease, and only the instance
/// that leads that lease enters the event in the outbox or saves the row, fenced by its epoch.
///
/// - A key `NAME:SYMBOL` of a rule-file source `NAME`, and an event whose `source` is `NAME`,
///   belong to `NAME`'s lease.
/// - Everything else belongs to the home lease: keys and events without a source (the
///   `--source` feed's), portfolios' and series' `@NAME` keys and events (whatever sources they
///   span), and the lists of known markets and filled history. The home lease is the `--source`
///   name when given, else the first source of the rule files. Every instance runs the same
///   rules, so every instance names the same owner, and a series spanning sources has one
///   owner without a lease of its own to keep.
///
/// `epochs` says, live, the epoch this instance leads a lease under, or nil (standby).
///
/// The rule-file sources change with a reload (`follow(sources:)`): an added source's events
/// and keys belong to its own lease from then on, and a removed source's lease is let go
/// (`whenChanged` tells the leadership). It also keeps since when this instance has evaluated
/// each lease's prices without a break (`followed(_:)`), which decides whether it may take a
/// lease over (`PostgresLeadership.acquire(following:)`).
public final class SourceLeases: Sendable {
    /// The lease of keys and events without a source of their own.
    public let home: String
    private let epochs: @Sendable (String) -> Int64?
    private struct State {
        var sources: Set<String>
        var followed: [String: ContinuousClock.Instant] = [:]
        var changed: (@Sendable ([String]) -> Void)?
    }
    private let state: Mutex<State>

    public init(home: String, sources: Set<String>, epochs: @escaping @Sendable (String) -> Int64?) {
        self.home = home
        self.epochs = epochs
        state = Mutex(State(sources: sources))
    }

    /// The rule files' source names that have a lease of their own.
    public var sources: Set<String> { state.withLock { $0.sources } }

    /// Every lease, the home lease first, then the others by name.
    public var all: [String] { Self.all(home: home, sources: sources) }

    private static func all(home: String, sources: Set<String>) -> [String] {
        [home] + sources.subtracting([home]).sorted()
    }

    /// The rule files' sources after a reload: each has its own lease from now on; `whenChanged`
    /// hears every lease when the set changed.
    public func follow(sources: Set<String>) {
        let (changed, leases) = state.withLock { state -> ((@Sendable ([String]) -> Void)?, [String]) in
            guard state.sources != sources else { return (nil, []) }
            state.sources = sources
            for lease in state.followed.keys where lease != home && !sources.contains(lease) {
                state.followed[lease] = nil
            }
            return (state.changed, Self.all(home: home, sources: sources))
        }
        changed?(leases)
    }

    /// Calls `body` with every lease each time a reload changes the sources.
    public func whenChanged(_ body: @escaping @Sendable ([String]) -> Void) {
        state.withLock { $0.changed = body }
    }

    /// The lease of an event whose `source` is `source` (nil: no source).
    public func lease(ofSource source: String?) -> String {
        guard let source else { return home }
        return state.withLock { $0.sources.contains(source) } ? source : home
    }

    /// The lease of the engine key `key` (`NAME:SYMBOL`, `SYMBOL`, `@NAME`).
    public func lease(ofKey key: String) -> String {
        guard let colon = key.firstIndex(of: ":") else { return home }
        return lease(ofSource: String(key[..<colon]))
    }

    /// The epoch this instance leads `lease` under now; nil while it is a standby for it.
    public func epoch(of lease: String) -> Int64? {
        epochs(lease)
    }

    /// This instance evaluated prices of `lease` (`now`): it follows it from the first of an
    /// unbroken run of them.
    public func evaluated(_ lease: String, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            if state.followed[lease] == nil { state.followed[lease] = now }
        }
    }

    /// The feed of `lease` dropped or went silent: what it misses until it is back is not
    /// evaluated here, so it follows the lease again only from its next prices.
    public func lostTrack(of lease: String) {
        state.withLock { $0.followed[lease] = nil }
    }

    /// Since when this instance has evaluated `lease`'s prices without a break; nil while it
    /// has none.
    public func followed(_ lease: String) -> ContinuousClock.Instant? {
        state.withLock { $0.followed[lease] }
    }
}
