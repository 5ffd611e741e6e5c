import AlertEngine
import AlertModel
import Synchronization

/// Where pricealert keeps what outlives a process: a state folder (`StateStore`, SQLite) or a
/// PostgreSQL store (`AlertPostgres.PostgresStore`). `run` and `check` use only this, so both
/// keep the same things with the same guarantees (Docs/postgres.md "What is stored where").
public protocol DurableStore: AnyObject, Sendable {
    /// The store in a message: `state folder DIR`, or `store postgres://USER:***@HOST:PORT/DB…`
    /// (never a password).
    var place: String { get }
    /// The durable outbox.
    var deliveries: any FlushableOutbox { get }
    /// The engine's saved state and the last market list.
    var engine: any EngineStateKeeper { get }
    /// What the policy stages hold (quiet-hours holds, open digests).
    var journal: any PolicyJournal { get }
    /// How far back each symbol's history was filled from candles.
    var ledger: any BackfillRecorder { get }
    /// The markets `listed` rules know.
    var listings: any ListingKeeper { get }
    /// Each rule-file source's last market list.
    var sourceMarkets: any SourceMarketKeeper { get }
    /// The state folder, for what is kept in files of their own (nil for a PostgreSQL store).
    var localFolder: StateFolder? { get }
    /// Every silence, expired ones too.
    func silenceRecords() async throws -> [SilenceRecord]
    /// `error` in a message after `place` (SQLite's errors name the database file; PostgreSQL's
    /// never carry the password).
    func describe(_ error: any Error) -> String
    /// The process is stopping: a store that waits for its server while it is unreachable
    /// waits a little longer only, then fails what is left (and `close` names it).
    func stopping()
    /// Waits for the queued writes and closes the store; it must not be used afterwards.
    func close() async
    /// Why this process no longer holds the store it opened (a folder moved away, a lock lost),
    /// or nil while it does.
    func lost() async -> String?
}

/// The engine's state between runs (`EngineStateStore` in SQLite): each symbol's
/// `SymbolSnapshot` and its minute history, and the last market list. A save is one
/// transaction: a crash leaves the previous save or the new one, never a mix.
public protocol EngineStateKeeper: Sendable {
    /// Every saved symbol; a row that cannot be read is an error naming the symbol.
    func load() async throws -> [SymbolSnapshot]
    /// The saved symbols among `lookups`' keys, with at least the hours of history those
    /// minutes look up (`check`).
    func load(lookingUp lookups: [String: [ClosedRange<Int64>]]) async throws -> [SymbolSnapshot]
    /// Writes `snapshots` (replacing those symbols') and, when given, the market list.
    func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave?, now: Int64) async throws
    /// The market list saved last; nil when none was.
    func loadMarkets() async throws -> MarketsSave?
    /// Symbols with saved state.
    func count() async throws -> Int
}

/// The policy stages' journal (`PolicyStateStore` in SQLite): one row per (sink, held event),
/// written in order with the outbox's rows, so a digest's row is in the outbox no later than
/// the removal of its events here.
public protocol PolicyJournal: Sendable {
    /// Every row in `seq` order, read after everything recorded before.
    func load() async throws -> [PolicyStateStore.Pending]
    /// Queues `added` and the removal of `removed` and returns at once; a write that fails is
    /// kept and written again with later writes.
    func record(added: [PolicyStateStore.Pending], removed: [(sink: String, eventID: String)])
    /// Why some recorded changes are not written yet; nil when every one is.
    var unwritten: String? { get }
}

/// The backfill ledger (`BackfillLedger` in SQLite).
public protocol BackfillRecorder: Sendable {
    /// Symbol → reach (epoch ms) for `source`.
    func reaches(source: String) async throws -> [String: Int64]
    /// Stores `entries`, each replacing its (source, symbol), in one transaction.
    func record(_ entries: [BackfillLedger.Entry]) async throws
    /// Every entry, by source then symbol.
    func all() async throws -> [BackfillLedger.Entry]
}

/// The markets `listed` rules know, one set per market list (`ListingStore`, a file per list
/// in the state folder).
public protocol ListingKeeper: Sendable {
    /// Where they are kept, for a message.
    var place: String { get }
    /// The saved known and pending symbols of the list of ticks without a source and of each
    /// `sources` list that was saved (a list never saved is left out).
    func load(sources: [String]) async throws -> [SavedListings]
    /// Replaces what is kept of each list in `lists` with its known and pending symbols.
    func save(_ lists: [NewListings]) async throws
}

/// Each rule-file source's last market list (`SourceMarketStore`: `markets-NAME.json` in a state
/// folder), followed while the source's REST API cannot give a fresh one.
public protocol SourceMarketKeeper: Sendable {
    /// Where they are kept, for a message.
    var place: String { get }
    /// `source`'s saved list; nil when none was saved.
    func load(_ source: String) async throws -> MarketsSave?
    /// Replaces `list.source`'s saved list with `list`.
    func save(_ list: MarketsSave) async throws
}

// The SQLite stores' synchronous methods are their witnesses.
extension EngineStateStore: EngineStateKeeper {
    /// The hours of `snapshot`'s history that differ from what is stored when the store holds
    /// minutes `stored.first...stored.last` of it (every hour when nil), as index ranges, one
    /// per hour: what a save writes.
    public static func hoursToWrite(
        _ snapshot: SymbolSnapshot, since stored: (first: Int64, last: Int64)?
    ) -> [Range<Int>] {
        changedHours(snapshot, since: stored)
    }
}

extension PolicyStateStore: PolicyJournal {}
extension BackfillLedger: BackfillRecorder {}

extension ListingStore: ListingKeeper {
    public var place: String { path }
}

extension SourceMarketStore: SourceMarketKeeper {
    public var place: String { folder }
}

extension StateStore: DurableStore {
    /// A state folder never waits for a server.
    public func stopping() {}

    public var place: String { "state folder \(folder.path)" }
    public var deliveries: any FlushableOutbox { outbox }
    public var engine: any EngineStateKeeper { engineState }
    public var journal: any PolicyJournal { policyState }
    public var ledger: any BackfillRecorder { backfill }
    public var listings: any ListingKeeper { ListingStore(folder: folder) }
    public var sourceMarkets: any SourceMarketKeeper { SourceMarketStore(folder: folder) }
    public var localFolder: StateFolder? { folder }

    public func silenceRecords() async throws -> [SilenceRecord] {
        guard let silences = try SilenceStore.openIfPresent(folder) else { return [] }
        defer { silences.close() }
        return try silences.all()
    }
}

extension StateReadError {
    /// A saved symbol of another store (PostgreSQL) that cannot be read.
    public init(_ symbol: String, reason: String) {
        self.init(symbol: symbol, reason: reason)
    }
}

/// A journal's writes that failed and wait to be written again (each by a token), with the last
/// reason: what `PolicyJournal.unwritten` reports.
public final class FailingWrites: Sendable {
    private let state = Mutex((tokens: Set<UInt64>(), next: UInt64(0), reason: ""))

    public init() {}

    /// A token for a new write.
    public func token() -> UInt64 {
        state.withLock { state in
            state.next += 1
            return state.next
        }
    }

    /// The write `token` is made.
    public func written(_ token: UInt64) {
        _ = state.withLock { $0.tokens.remove(token) }
    }

    /// The write `token` failed for `reason` (it is written again later).
    public func failed(_ token: UInt64, reason: String) {
        state.withLock { state in
            state.tokens.insert(token)
            state.reason = reason
        }
    }

    /// The last reason while some write is not made; nil when every one is.
    public var reason: String? {
        state.withLock { $0.tokens.isEmpty ? nil : $0.reason }
    }
}
