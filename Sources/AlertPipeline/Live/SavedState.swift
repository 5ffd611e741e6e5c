import AlertEngine
import AlertModel
import AlertStore
import Synchronization

/// The engine state loaded at start, handed over once (`take`). The engine must be the only
/// owner of the minute histories it restores: while another reference to a snapshot lives, each
/// symbol's first new minute copies its history, and the daemon holds both copies for the run.
public final class SavedState: Sendable {
    private let snapshots: Mutex<[SymbolSnapshot]>

    public init(_ snapshots: consuming [SymbolSnapshot]) {
        self.snapshots = Mutex(snapshots)
    }

    /// The snapshots, left empty here.
    public func take() -> [SymbolSnapshot] {
        snapshots.withLock { snapshots in
            var taken: [SymbolSnapshot] = []
            swap(&taken, &snapshots)
            return taken
        }
    }
}

/// Engine state a save could not write (an alert before it was not in the outbox yet, or the
/// save failed), written with the next save: the newest snapshot of each symbol, the newest
/// market list.
struct UnsavedState {
    private var snapshots: [String: SymbolSnapshot] = [:]
    private var markets: MarketsSave?

    /// What the next save writes: what is kept here (taken out) with `newer` over it.
    mutating func adding(
        _ newer: [SymbolSnapshot], markets newerMarkets: MarketsSave?
    )
        -> ([SymbolSnapshot], markets: MarketsSave?)
    {
        let allMarkets = newerMarkets ?? markets
        markets = nil
        if snapshots.isEmpty { return (newer, allMarkets) }
        for snapshot in newer { snapshots[snapshot.symbol] = snapshot }
        let all = Array(snapshots.values)
        snapshots = [:]
        return (all, allMarkets)
    }

    /// Nothing is waiting to be written.
    var isEmpty: Bool { snapshots.isEmpty && markets == nil }

    /// Keeps what a save could not write.
    mutating func keep(_ unsaved: [SymbolSnapshot], markets unsavedMarkets: MarketsSave?) {
        for snapshot in unsaved { snapshots[snapshot.symbol] = snapshot }
        markets = unsavedMarkets
    }
}
