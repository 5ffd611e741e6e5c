import AlertCore
import AlertRules
import AlertSinks
import AlertStore

/// How a command hands alerts on: straight to the sinks (`Dispatcher`), or, when a state folder
/// is in use, through the durable outbox for webhook and exec sinks (`ReliableDispatcher`).
enum AlertDelivery: Sendable {
    case direct(Dispatcher)
    case reliable(ReliableDispatcher, StateStore)

    /// The outbox is used when `--state` is given or a rule in use notifies a webhook/exec sink.
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        let durable = durableSinks(ruleSet: ruleSet, among: sinks.keys)
        guard state.path != nil || !durable.isEmpty else { return .direct(Dispatcher(sinks: sinks)) }
        let store = try state.open()
        let dispatcher = ReliableDispatcher(sinks: sinks, durable: durable, outbox: store.outbox,
                                            configuration: .init(definitions: ruleSet.sinks.values))
        await dispatcher.start()
        return .reliable(dispatcher, store)
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

    /// Hands `alert` on; returns how many direct deliveries failed.
    func dispatch(_ alert: Alert) async -> Int {
        let results: [(sink: String, result: SinkResult)]
        switch self {
        case .direct(let dispatcher): results = await dispatcher.dispatch(alert)
        case .reliable(let dispatcher, _): results = await dispatcher.dispatch(alert)
        }
        return results.filter { $0.result.failureReason != nil }.count
    }

    /// At the end of a run: waits up to `timeout` for outbox deliveries, closes the state folder,
    /// and returns how many alerts did not reach a durable sink (dead letters of this run plus
    /// rows still pending, which the next start delivers).
    func finish(timeout: Duration) async -> Int {
        guard case .reliable(let dispatcher, let store) = self else { return 0 }
        await dispatcher.drain(timeout: timeout)
        let counts = await dispatcher.counts()
        let dead = dispatcher.durable.reduce(0) { $0 + (counts[$1]?.dead ?? 0) }
        let pending = await dispatcher.outboxDepth()
        if pending > 0 {
            StandardError.write("pricealert: \(pending) deliveries wait in the outbox of \(store.folder.path); the next start (or 'pricealert outbox flush') sends them")
        }
        store.close()
        return dead + pending
    }
}
