import AlertCore
import AlertFeeds
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore
import Logging
import Wallclock

/// How a command hands alerts on: through the event-time policy stages (`DeliveryPolicy`:
/// silence → priority → quiet hours → group), then straight to the sinks (`Dispatcher`), or,
/// when a state folder is in use, through the durable outbox for webhook and exec sinks
/// (`ReliableDispatcher`), where what the stages hold is journaled too.
struct AlertDelivery: Sendable {
    enum Route: Sendable {
        case direct(Dispatcher)
        case reliable(ReliableDispatcher, StateStore)
    }

    let route: Route
    let policy: DeliveryPolicy

    /// The outbox is used when `--state` is given or a rule in use notifies a webhook/exec sink.
    /// Silences come from the state folder (the default one without `--state`).
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        let durable = durableSinks(ruleSet: ruleSet, among: sinks.keys)
        guard state.path != nil || !durable.isEmpty else {
            let policy = try policy(ruleSet, silences: SilenceCommand.load(state.path), journal: nil)
            return AlertDelivery(route: .direct(Dispatcher(sinks: sinks)), policy: policy)
        }
        return try await make(ruleSet: ruleSet, sinks: sinks, store: state.open())
    }

    /// Delivery through the outbox of an opened state folder, which `finish` closes; the policy
    /// stages get back what they held when the folder was last used. An outbox that cannot be
    /// read closes the folder and exits 73, naming the file.
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], store: StateStore) async throws -> AlertDelivery {
        let durable = durableSinks(ruleSet: ruleSet, among: sinks.keys)
        let dispatcher = ReliableDispatcher(sinks: sinks, durable: durable, outbox: store.outbox,
                                            configuration: .init(definitions: ruleSet.sinks.values))
        let held: [PolicyStateStore.Pending]
        let policy: DeliveryPolicy
        do {
            try await dispatcher.start()
            held = try await store.policyState.load()
        } catch {
            throw StateOption.unusable(store, error, doing: "cannot read the outbox")
        }
        do {
            policy = try Self.policy(ruleSet, silences: SilenceCommand.load(store.folder.path), journal: store.policyState)
        } catch {
            store.close()
            throw error
        }
        let delivery = AlertDelivery(route: .reliable(dispatcher, store), policy: policy)
        _ = await delivery.hand(policy.restore(held))
        return delivery
    }

    private static func policy(_ ruleSet: RuleSet, silences: SilenceSet, journal: PolicyStateStore?) throws -> DeliveryPolicy {
        do {
            return try DeliveryPolicy(ruleSet: ruleSet, silences: silences, journal: journal)
        } catch {
            StandardError.write("pricealert: error: quiet hours: unknown time zone \(UserText.double(error.name))")
            throw ExitCodes.dataError
        }
    }

    /// Sinks that must not lose an alert: webhook and exec.
    static func durableSinks(ruleSet: RuleSet, among names: some Sequence<String>) -> Set<String> {
        Set(names.filter { name in
            switch ruleSet.sinks[name]?.kind {
            case .webhook?, .exec?: return true
            default: return false
            }
        })
    }

    /// The opened state folder, when there is one.
    var store: StateStore? {
        if case .reliable(_, let store) = route { return store }
        return nil
    }

    /// Saves the engine's changed state (and a new market list) in the state folder, once every
    /// alert dispatched before is in the outbox: state that says an alert fired never outlives
    /// an alert that is not on disk. False when nothing was saved (an alert not written yet, or
    /// the save failed), logged: the caller keeps the snapshots for the next save, and the run
    /// goes on.
    func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave?, logger: Logger) async -> Bool {
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
    func save(_ listings: NewListings, logger: Logger) async {
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
    func commit() async throws(UnwrittenAlerts) {
        guard case .reliable(let dispatcher, _) = route else { return }
        try await dispatcher.commit()
        if let reason = policy.unwritten { throw UnwrittenAlerts(ids: ["held events of the policy stages"], reason: reason) }
    }

    /// Alerts dispatched that the outbox could not take (nil: none; they were never sent).
    var unwritten: UnwrittenAlerts? {
        guard case .reliable(let dispatcher, _) = route else { return nil }
        return dispatcher.unwrittenAlerts()
    }

    /// Hands `alert` on through the policy stages; returns how many direct deliveries failed.
    func dispatch(_ alert: Alert) async -> Int {
        if policy.passesUntouched { return await send(.event(alert), to: alert.notify) }
        return await hand(policy.receive(alert))
    }

    /// Hands on the quiet windows and digests whose end the wall clock has passed (`run`: about
    /// every second; `check`: once, before it commits). Returns how many direct deliveries failed.
    func closeDue(wallTime: Int64) async -> Int {
        await hand(policy.close(wallTime: wallTime))
    }

    /// Hands on every quiet window and digest still open (the end of a replay).
    func closeAll() async -> Int {
        await hand(policy.finish())
    }

    /// `run`'s wall-clock side of the stages, until cancelled: closes what is due about every
    /// second, and hands changed silences of the state folder to the stages (`SilenceWatcher`).
    func followPolicy(logger: Logger) async {
        await withTaskGroup(of: Void.self) { group in
            if let folder = store?.folder {
                group.addTask { try? await SilenceWatcher(folder: folder, logger: logger, apply: policy.use).run() }
            }
            group.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil {
                    _ = await closeDue(wallTime: Wallclock.millis())
                }
            }
        }
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

    /// Deliveries waiting in the outbox (0 without one): the `/metrics` outbox gauge.
    func outboxDepth() async -> Int {
        guard case .reliable(let dispatcher, _) = route else { return 0 }
        return await dispatcher.outboxDepth()
    }

    /// At the end of a run: waits up to `timeout` for outbox deliveries, closes the state folder,
    /// and returns how many alerts did not reach a durable sink: dead letters of this run, plus
    /// rows still pending (which the next start delivers) when `countPending`. A daemon stopped by
    /// SIGTERM does not count them: they are safe in the outbox, and systemd should see exit 0.
    /// Alerts the outbox never took (`unwritten`, tried once more at closing) are named on
    /// standard error; the command exits 73 for them.
    func finish(timeout: Duration, countPending: Bool = true) async -> Int {
        guard case .reliable(let dispatcher, let store) = route else { return 0 }
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
