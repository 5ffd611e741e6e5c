import AlertCore
import AlertSinks
import AlertStore
import Logging
import Wallclock

/// How a command hands alerts on: straight to the sinks (`Dispatcher`), or, when a state folder
/// is in use, through the durable outbox for webhook and exec sinks (`ReliableDispatcher`).
public enum AlertDelivery: Sendable {
    case direct(Dispatcher)
    case reliable(ReliableDispatcher, StateStore)

    /// The opened state folder, when there is one.
    public var store: StateStore? {
        if case .reliable(_, let store) = self { return store }
        return nil
    }

    /// Saves the engine's changed state (and a new market list) in the state folder, once every
    /// alert dispatched before is in the outbox: state that says an alert fired never outlives
    /// an alert that is not on disk. False when nothing was saved (an alert not written yet, or
    /// the save failed), logged: the caller keeps the snapshots for the next save, and the run
    /// goes on.
    public func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave?, logger: Logger) async -> Bool {
        guard let store else { return true }
        do {
            try await commit()
        } catch {
            logger.error("state not saved in \(store.folder.path): \(error); it is saved once they are written")
            return false
        }
        do {
            try store.engineState.save(snapshots, markets: markets, now: Wallclock.millis())
            return true
        } catch {
            logger.error("cannot save state in \(store.folder.path): \(store.describe(error))")
            return false
        }
    }

    /// Saves the known markets of `listed` rules once every alert before is in the outbox.
    public func save(_ listings: NewListings, logger: Logger) async {
        guard let store else { return }
        do {
            try await commit()
            try ListingStore(folder: store.folder).save(listings)
        } catch {
            logger.error("cannot save the known markets in \(store.folder.path): \(error)")
        }
    }

    /// Returns when every alert dispatched so far is on disk in the outbox: state that says an
    /// alert fired is saved only after it. Throws when some could not be written.
    public func commit() async throws(UnwrittenAlerts) {
        if case .reliable(let dispatcher, _) = self { try await dispatcher.commit() }
    }

    /// Alerts dispatched that the outbox could not take (nil: none; they were never sent).
    public var unwritten: UnwrittenAlerts? {
        guard case .reliable(let dispatcher, _) = self else { return nil }
        return dispatcher.unwrittenAlerts()
    }

    /// Hands `alert` on; returns how many direct deliveries failed.
    public func dispatch(_ alert: Alert) async -> Int {
        let results: [(sink: String, result: SinkResult)]
        switch self {
        case .direct(let dispatcher): results = await dispatcher.dispatch(alert)
        case .reliable(let dispatcher, _): results = await dispatcher.dispatch(alert)
        }
        return results.filter { $0.result.failureReason != nil }.count
    }

    /// Deliveries waiting in the outbox (0 without one): the `/metrics` outbox gauge.
    public func outboxDepth() async -> Int {
        guard case .reliable(let dispatcher, _) = self else { return 0 }
        return await dispatcher.outboxDepth()
    }

    /// At the end of a run: waits up to `timeout` for outbox deliveries, closes the state folder,
    /// and returns how many alerts did not reach a durable sink: dead letters of this run, plus
    /// rows still pending (which the next start delivers) when `countPending`. A daemon stopped by
    /// SIGTERM does not count them: they are safe in the outbox, and systemd should see exit 0.
    /// Alerts the outbox never took (`unwritten`, tried once more at closing) are named on
    /// standard error; the command exits 73 for them.
    public func finish(timeout: Duration, countPending: Bool = true) async -> Int {
        guard case .reliable(let dispatcher, let store) = self else { return 0 }
        await dispatcher.drain(timeout: timeout)
        let counts = await dispatcher.counts()
        let dead = dispatcher.durable.reduce(0) { $0 + (counts[$1]?.dead ?? 0) }
        let pending = await dispatcher.outboxDepth()
        if pending > 0 {
            StandardError.write("pricealert: \(pending) deliveries wait in the outbox of \(store.folder.path); the next start (or 'pricealert outbox flush') sends them")
        }
        store.close()
        if let missing = dispatcher.unwrittenAlerts() {
            let shown = missing.ids.prefix(10).joined(separator: ", ") + (missing.ids.count > 10 ? ", …" : "")
            StandardError.write("pricealert: error: cannot write \(missing.ids.count) alert\(missing.ids.count == 1 ? "" : "s") to the outbox in \(store.folder.databasePath): \(missing.reason); not sent to webhook and exec sinks: \(shown)")
        }
        return dead + (countPending ? pending : 0)
    }
}
