import AlertFeeds
import AlertModel
import AlertPolicy
import AlertStore
import Platform

/// `check` (Docs/cli.md), once its inputs are in hand: one snapshot of prices evaluated by the
/// `Evaluator` that `replay` and `run` share, restored from the state the previous check saved;
/// the alerts listed (with a format) and dispatched; then, in this order, the outbox committed,
/// the state saved, the filled history recorded, and the outbox given `drainTimeout`. An alert
/// the outbox cannot take leaves the state as it was, so the next check evaluates the same
/// prices again rather than losing it. The evaluation reads no clock, so consecutive checks
/// over the pieces of a stream give exactly the alerts of one `replay` of the whole stream; the
/// time of day only closes the policy's windows and stamps what is saved.
public struct CheckRun {
    public var evaluator: Evaluator
    /// The state folder or PostgreSQL store the state is restored from and saved to.
    public var store: any DurableStore
    public var delivery: AlertDelivery
    /// Where new listings are kept (nil: no `listed` rules).
    public var listings: (any ListingKeeper)?
    /// The market list to save with the state (nil: the saved one is still current).
    public var marketsToSave: MarketsSave?
    /// Rule-file sources' market lists fetched now, kept once the state is saved.
    public var sourceMarketsToSave: [MarketsSave] = []
    /// With a format, the alerts are listed on standard output, and the sinks in `printing`
    /// (the stdout sinks, which would repeat each line) are left out of what is dispatched.
    public var format: AlertOutputFormat?
    public var printing: Set<String> = []
    /// Silenced alerts are listed and marked.
    public var silences = SilenceSet()
    /// How long the outbox may take to deliver before what is left waits for the next check.
    public var drainTimeout: Duration
    /// A tick timed after this (epoch ms) is refused: a source's snapshot is timed by now's
    /// clocks (Docs/rules.md#ticks-from-the-future); a tick file is history (`.max`).
    public var notAfter: Int64 = .max
    /// `check --source`: where the history the rules need comes from, and how far back the
    /// state folder's ledger says each symbol is filled already.
    public var backfill: (supply: any CandleSupply, filled: [String: Int64])?
    /// Called once the state is saved: the evaluation is done (`check --store` marks it, so a
    /// check on another host in the same interval does nothing).
    public var evaluated: (@Sendable () async -> Void)?

    /// The state was not saved (the reason was written to standard error): exit 73.
    public struct StateNotSaved: Error, Sendable {}

    public struct Outcome: Sendable {
        public var alerts: Int
        /// Deliveries that failed or wait in the outbox for the next check.
        public var failures: Int
    }

    public init(evaluator: Evaluator, store: any DurableStore, delivery: AlertDelivery, drainTimeout: Duration) {
        self.evaluator = evaluator
        self.store = store
        self.delivery = delivery
        self.drainTimeout = drainTimeout
    }

    /// Evaluates `snapshot` in order; `place` names where tick `i` came from (a tick file's
    /// line, or the source and symbol), for the lines that report a dropped tick.
    public mutating func run(
        _ snapshot: [Tick], place: (_ i: Int, Tick) -> Drop.Place
    ) async throws(StateNotSaved) -> Outcome {
        var backfilled: [BackfillLedger.Entry] = []
        if let backfill {
            backfilled = await Self.fill(snapshot, from: backfill.supply, filled: backfill.filled, evaluator: evaluator)
        }
        var alerts: [Alert] = []
        for (i, tick) in snapshot.enumerated() {
            if let drop = evaluator.process(tick, at: place(i, tick), into: &alerts, notAfter: notAfter) {
                StandardError.write(drop.description)
            }
        }
        var failures = 0
        if let format, !alerts.isEmpty {
            var lines: [UInt8] = []
            for alert in alerts {
                AlertListing.appendLine(for: alert, format: format, silence: silences.silence(for: alert), to: &lines)
                lines.append(UInt8(ascii: "\n"))
            }
            StandardOutput.shared.write(lines: lines)
        }
        let printing = format == nil ? [] : printing
        // Together: a sink delivered directly (a file) takes them with one write.
        failures += await delivery.dispatch(alerts.map { AlertListing.dispatched($0, skipping: printing) })
        failures += await delivery.closeDue(wallTime: Wallclock.millis())
        // Every alert is in the outbox (or delivered) before the state that produced it is saved:
        // a crash in between fires it again rather than losing it. An alert the outbox cannot
        // take leaves the state as it was, so the next run evaluates it again.
        do {
            try await delivery.commit()
        } catch {
            _ = await delivery.finish(timeout: drainTimeout)
            StandardError.write(
                "pricealert: error: state not saved in \(statePlace): the next check evaluates these prices again")
            throw StateNotSaved()
        }
        do {
            try await store.engine.save(
                evaluator.takeChanges(final: true), markets: marketsToSave, now: Wallclock.millis())
            if let listings, let changed = evaluator.takeChangedListings() { try await listings.save(changed) }
        } catch {
            StandardError.write("pricealert: error: cannot save state in \(statePlace): \(describe(error))")
            _ = await delivery.finish(timeout: drainTimeout)
            throw StateNotSaved()
        }
        await evaluated?()
        for list in sourceMarketsToSave {
            do {
                try await store.sourceMarkets.save(list)
            } catch {
                StandardError.write(
                    "pricealert: warning: cannot keep the market list of source '\(list.source)' in \(store.sourceMarkets.place): \(store.describe(error))"
                )
            }
        }
        do {
            try await store.ledger.record(backfilled)
        } catch {
            StandardError.write(
                "pricealert: warning: cannot record the filled history in \(statePlace): \(store.describe(error)); the next check fetches it again"
            )
        }
        failures += await delivery.finish(timeout: drainTimeout)
        return Outcome(alerts: alerts.count, failures: failures)
    }

    /// Where the state is, in a message: the state folder's path, or the store's URL (without
    /// its password).
    private var statePlace: String { store.localFolder?.path ?? store.place }

    /// A save's error: as a state folder's has always been said, or the store's reason.
    private func describe(_ error: any Error) -> String {
        store.localFolder == nil ? store.describe(error) : "\(error)"
    }

    /// Fills the history of the snapshot's symbols that the rules need and the ledger
    /// (`filled`) does not list, from `supply`'s candles ending before each symbol's first tick
    /// here (Docs/candles.md); returns the ledger entries to record once the state is saved.
    private static func fill(
        _ snapshot: [Tick], from supply: any CandleSupply, filled: [String: Int64],
        evaluator: Evaluator
    ) async -> [BackfillLedger.Entry] {
        let reaches = evaluator.historyReaches
        guard !reaches.isEmpty else { return [] }
        var firstTimes: [String: Int64] = [:]
        for tick in snapshot {
            let symbol = Symbol.normalize(tick.symbol)
            firstTimes[symbol] = min(firstTimes[symbol] ?? .max, tick.time)
        }
        let needs = firstTimes.compactMap { symbol, until in
            reaches[symbol].map { Backfill.Need(symbol: symbol, reach: $0.reach, detail: $0.detail, until: until) }
        }
        return await evaluator.fillHistory(needs, from: supply, filled: filled, now: Wallclock.millis()) { line in
            switch line {
            case .info: break
            case .notice(let text): StandardError.write("pricealert: note: \(text)")
            case .warning(let text): StandardError.write("pricealert: warning: \(text)")
            }
        }
    }
}
