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
public final class SourceLeases: Sendable {
    /// The lease of keys and events without a source of their own.
    public let home: String
    /// The rule files' source names that have a lease of their own.
    public let sources: Set<String>
    private let epochs: @Sendable (String) -> Int64?

    public init(home: String, sources: Set<String>, epochs: @escaping @Sendable (String) -> Int64?) {
        self.home = home
        self.sources = sources
        self.epochs = epochs
    }

    /// Every lease, the home lease first, then the others by name.
    public var all: [String] { [home] + sources.subtracting([home]).sorted() }

    /// The lease of an event whose `source` is `source` (nil: no source).
    public func lease(ofSource source: String?) -> String {
        guard let source, sources.contains(source) else { return home }
        return source
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
}
