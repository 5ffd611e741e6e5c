import AlertModel
import AlertStore
import Logging
import Operations
import Platform
import ServiceLifecycle
import Synchronization

/// Delivery as a service: hands each alert from the evaluator to `AlertDelivery` (sinks, or the
/// outbox for webhook and exec sinks), in order, and writes the saves behind them.
///
/// - Outbox before state: a save is written only after every alert handed on before it is in
///   the outbox (`AlertDelivery.save`), so a crash can repeat an alert (same id) but never lose
///   one.
/// - Held alerts: while an alert cannot be written to the outbox (disk full), the dispatcher
///   holds it and writes it again every second; no state is saved meanwhile (`UnsavedState`
///   keeps the changes for the next save), `/healthz` says so, and the run ends with
///   `unwritten` set if it never was written.
/// - Bounded: half a gate's worth of alerts at a time is made durable before `AlertGate` lets
///   the evaluator on, so the outbox's queue is bounded too, not only the hand-over.
/// - Backfill ledger: symbols filled from candles are recorded only once every save handed
///   over before them is written.
/// - Flapping feed: `@feed-stale`/`@feed-recovered` pass `FeedFlapDamping` first, so a feed
///   that keeps going stale and recovering does not page people on every change.
/// - Shutdown: once the evaluator has finished its input (its final save last), this service's
///   turn gives the outbox `drainTimeout` to deliver what is due and closes the state folder.
final class DeliveryService: Service {
    let delivery: AlertDelivery
    let input: AsyncStream<DeliveryInput>
    /// Where the ticker puts `.wallClock`, behind what the evaluator handed on.
    let clock: AsyncStream<DeliveryInput>.Continuation
    let gate: AlertGate
    let drainTimeout: Duration
    let logger: Logger
    /// Deliveries that failed (and, at the end, dead letters), once the service has returned.
    private let result = Mutex(0)

    init(
        delivery: AlertDelivery, input: AsyncStream<DeliveryInput>, clock: AsyncStream<DeliveryInput>.Continuation,
        gate: AlertGate, drainTimeout: Duration, logger: Logger
    ) {
        self.delivery = delivery
        self.input = input
        self.clock = clock
        self.gate = gate
        self.drainTimeout = drainTimeout
        self.logger = logger
    }

    var failures: Int { result.withLock { $0 } }

    func run() async {
        let clock = self.clock
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                clock.yield(.wallClock(Wallclock.millis()))
            }
        }
        var failures = 0
        var sinceCommit = 0
        var unsaved = UnsavedState()
        var unrecorded: [BackfillLedger.Entry] = []
        var damping = FeedFlapDamping(counted: PolicyMetrics.feedAlertDamped)
        for await item in input {
            switch item {
            case .alert(let alert):
                switch damping.take(alert) {
                case .deliver: failures += await delivery.dispatch(alert)
                case .held(let began):
                    if began {
                        logger.warning(
                            "\(alert.symbol.lowercased()) feed is flapping: more than \(FeedFlapDamping.limit) stale/recovered changes within \(DurationText.format(FeedFlapDamping.window)); its @feed-stale/@feed-recovered alerts are held until it has been steady for \(DurationText.format(FeedFlapDamping.holdDown))"
                        )
                    }
                }
                sinceCommit += 1
                if sinceCommit >= gate.limit / 2 {
                    try? await delivery.commit()
                    sinceCommit = 0
                }
                gate.dispatched()
            case .save(let snapshots, let markets, let written):
                let (snapshots, markets) = unsaved.adding(snapshots, markets: markets)
                if !(await delivery.save(snapshots, markets: markets, logger: logger)) {
                    unsaved.keep(snapshots, markets: markets)
                }
                written?()
                unrecorded = await record(unrecorded, unless: unsaved)
            case .backfilled(let entries):
                unrecorded = await record(unrecorded + entries, unless: unsaved)
            case .listings(let listings):
                await delivery.save(listings, logger: logger)
            case .sourceMarkets(let list):
                guard let store = delivery.store else { break }
                do {
                    try await store.sourceMarkets.save(list)
                } catch {
                    logger.warning(
                        "cannot keep the market list of source '\(list.source)' in \(store.sourceMarkets.place): \(store.describe(error))"
                    )
                }
            case .rules(let rules):
                delivery.policy.use(rules)
            case .wallClock(let now):
                for alert in damping.due(now: now) { failures += await delivery.dispatch(alert) }
                failures += await everySecond(wallTime: now)
            }
        }
        ticker.cancel()
        // The input ends at the evaluator's turn in the shutdown; this service's comes next.
        try? await gracefulShutdown()
        for alert in damping.flush() { failures += await delivery.dispatch(alert) }
        if damping.damped > 0 {
            logger.notice(
                "\(damping.damped) @feed-stale/@feed-recovered alerts of a flapping feed were not delivered (flap damping)"
            )
        }
        failures += await delivery.finish(timeout: drainTimeout, countPending: false)
        result.withLock { $0 = failures }
    }

    /// The once-a-second wall-clock call, in order with the alerts: where policy stages that
    /// close by the clock (quiet hours that end, group windows that close) are called. Returns
    /// how many direct deliveries failed.
    private func everySecond(wallTime: Int64) async -> Int {
        await delivery.closeDue(wallTime: wallTime)
    }

    /// Records `entries` in the ledger when every save handed over so far is written (`unsaved`
    /// is empty); otherwise returns them to record after a later save.
    private func record(
        _ entries: [BackfillLedger.Entry], unless unsaved: UnsavedState
    ) async -> [BackfillLedger.Entry] {
        guard !entries.isEmpty, let store = delivery.store else { return [] }
        guard unsaved.isEmpty else { return entries }
        do {
            try await store.ledger.record(entries)
        } catch {
            logger.warning(
                "cannot record the filled history in \(store.place): \(store.describe(error)); the next start fetches it again"
            )
        }
        return []
    }
}
