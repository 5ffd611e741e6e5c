import AlertEngine
import AlertModel
import AlertOutbox
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore
import Logging
import Platform

/// How a command hands alerts on: through the event-time policy stages (`DeliveryPolicy`:
/// silence → priority → quiet hours → group), then straight to the sinks (`Dispatcher`), or,
/// when a state folder or a PostgreSQL store is in use, through the durable outbox for webhook
/// and exec sinks (`ReliableDispatcher`), where what the stages hold is journaled too.
public struct AlertDelivery: Sendable {
    public enum Route: Sendable {
        case direct(Dispatcher)
        case reliable(ReliableDispatcher, any DurableStore)
    }

    public let route: Route
    public let policy: DeliveryPolicy

    public init(route: Route, policy: DeliveryPolicy) {
        self.route = route
        self.policy = policy
    }

    /// Hands back to the stages what they held when the state folder was last used (a digest
    /// whose window has passed leaves at once). Returns how many direct deliveries failed.
    public func restore(_ held: [PolicyStateStore.Pending]) async -> Int {
        await hand(policy.restore(held))
    }

    /// The opened state folder or store, when there is one.
    public var store: (any DurableStore)? {
        if case .reliable(_, let store) = route { return store }
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
            logger.error("state not saved in \(store.place): \(error); it is saved once they are written")
            return false
        }
        do {
            try await store.engine.save(snapshots, markets: markets, now: Wallclock.millis())
            return true
        } catch {
            logger.error("cannot save state in \(store.place): \(store.describe(error))")
            return false
        }
    }

    /// Saves the known markets of `listed` rules (one tracker per market list) once every
    /// alert before is in the outbox.
    public func save(_ listings: [NewListings], logger: Logger) async {
        guard let store else { return }
        do {
            try await commit()
            try await store.listings.save(listings)
        } catch {
            logger.error("cannot save the known markets in \(store.listings.place): \(store.describe(error))")
        }
    }

    /// Returns when every alert dispatched so far is on disk in the outbox: state that says an
    /// alert fired is saved only after it. Throws when some could not be written.
    public func commit() async throws(UnwrittenAlerts) {
        guard case .reliable(let dispatcher, _) = route else { return }
        try await dispatcher.commit()
        if let reason = policy.unwritten {
            throw UnwrittenAlerts(ids: ["held events of the policy stages"], reason: reason)
        }
    }

    /// Alerts dispatched that the outbox could not take (nil: none; they were never sent).
    public var unwritten: UnwrittenAlerts? {
        guard case .reliable(let dispatcher, _) = route else { return nil }
        return dispatcher.unwrittenAlerts()
    }

    /// Hands `alert` on through the policy stages; returns how many direct deliveries failed.
    public func dispatch(_ alert: Alert) async -> Int {
        if policy.passesUntouched { return await send(.event(alert), to: alert.notify) }
        return await hand(policy.receive(alert))
    }

    /// Hands `alerts` on in order, as `dispatch(_ alert:)` does each; when the policy stages let
    /// events through untouched, a sink delivered directly (stdout, file) is handed the events
    /// meant for it at once. Returns how many direct deliveries failed.
    public func dispatch(_ alerts: [Alert]) async -> Int {
        guard policy.passesUntouched else {
            var failed = 0
            for alert in alerts { failed += await dispatch(alert) }
            return failed
        }
        switch route {
        case .direct(let dispatcher): return await dispatcher.dispatch(alerts)
        case .reliable(let dispatcher, _): return await dispatcher.dispatch(alerts)
        }
    }

    /// Hands on the quiet windows and digests whose end the wall clock has passed (`run`: about
    /// every second; `check`: once, before it commits). Returns how many direct deliveries failed.
    /// On a shared store, the owner of the staged sinks' stages first feeds them the journal's
    /// new rows (`DeliveryPolicy.follow`); a journal it cannot read now is read at the next call.
    public func closeDue(wallTime: Int64) async -> Int {
        var failed = 0
        if case .some(let epoch) = policy.sharedOwnerEpoch {
            var rows: [PolicyStateStore.Pending]? = []
            if epoch != nil, let store {
                do {
                    rows = try await store.journal.load()
                } catch {
                    rows = nil
                    Logger(label: "pricealert.policy").warning(
                        "cannot read the policy journal in \(store.place): \(store.describe(error)); read again in a second"
                    )
                }
            }
            if let rows { failed += await hand(policy.follow(rows, epoch: epoch)) }
        }
        return failed + (await hand(policy.close(wallTime: wallTime)))
    }

    /// Hands on every quiet window and digest still open (the end of a replay).
    public func closeAll() async -> Int {
        await hand(policy.finish())
    }

    /// Dispatches what the stages decided, then drops the journal rows of what left.
    private func hand(_ plan: DeliveryPolicy.Plan) async -> Int {
        guard !plan.isEmpty else { return 0 }
        var failed = 0
        for digest in plan.digests { failed += await send(.digest(digest), to: [digest.sink]) }
        for (alert, urgent) in plan.events { failed += await send(.event(alert), to: alert.notify, urgent: urgent) }
        policy.dispatched(plan)
        return failed
    }

    /// Hands `delivery` to `sinks`; returns how many direct deliveries failed.
    private func send(_ delivery: Delivery, to sinks: [String], urgent: Bool = false) async -> Int {
        let results: [(sink: String, result: SinkResult)]
        switch route {
        case .direct(let dispatcher): results = await dispatcher.dispatch(delivery, to: sinks, urgent: urgent)
        case .reliable(let dispatcher, _): results = await dispatcher.dispatch(delivery, to: sinks, urgent: urgent)
        }
        return results.filter { $0.result.failureReason != nil }.count
    }

    /// Outbox rows another instance entered and left (a takeover): delivered from now on.
    public func adopt(_ rows: [OutboxEntry]) async {
        guard case .reliable(let dispatcher, _) = route else { return }
        await dispatcher.adopt(rows)
    }

    /// Deliveries waiting in the outbox (0 without one): the `/metrics` outbox gauge.
    public func outboxDepth() async -> Int {
        guard case .reliable(let dispatcher, _) = route else { return 0 }
        return await dispatcher.outboxDepth()
    }

    /// At the end of a run: waits up to `timeout` for outbox deliveries, closes the state folder,
    /// and returns how many alerts did not reach a durable sink: dead letters of this run, plus
    /// rows still pending (which the next start delivers) when `countPending`. A daemon stopped by
    /// SIGTERM does not count them: they are safe in the outbox, and systemd should see exit 0.
    /// Alerts the outbox never took (`unwritten`, tried once more at closing) are named on
    /// standard error; the command exits 73 for them.
    public func finish(timeout: Duration, countPending: Bool = true) async -> Int {
        guard case .reliable(let dispatcher, let store) = route else { return 0 }
        store.stopping()
        await dispatcher.drain(timeout: timeout)
        let counts = await dispatcher.counts()
        let dead = dispatcher.durable.reduce(0) { $0 + (counts[$1]?.dead ?? 0) }
        let pending = await dispatcher.outboxDepth()
        if pending > 0 {
            StandardError.write(
                "pricealert: \(pending) deliveries wait in the outbox of \(store.place); the next start (or 'pricealert outbox flush') sends them"
            )
        }
        await store.close()
        if let missing = dispatcher.unwrittenAlerts() {
            let shown = missing.ids.prefix(10).joined(separator: ", ") + (missing.ids.count > 10 ? ", …" : "")
            StandardError.write(
                "pricealert: error: cannot write \(missing.ids.count) alert\(missing.ids.count == 1 ? "" : "s") to the outbox in \(store.localFolder?.databasePath ?? store.place): \(missing.reason); not sent to webhook and exec sinks: \(shown)"
            )
        }
        return dead + (countPending ? pending : 0)
    }
}
