import AlertCore
import AlertPipeline
import AlertRules
import AlertSinks
import AlertStore

/// How a command's options choose its `AlertDelivery`: which sinks are durable, and whether a
/// state folder (and so the outbox) is in use.
extension AlertDelivery {
    /// The outbox is used when `--state` is given or a rule in use notifies a webhook/exec sink.
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        let durable = durableSinks(ruleSet: ruleSet, among: sinks.keys)
        guard state.path != nil || !durable.isEmpty else { return .direct(Dispatcher(sinks: sinks)) }
        return try await make(ruleSet: ruleSet, sinks: sinks, store: state.open())
    }

    /// Delivery through the outbox of an opened state folder, which `finish` closes. An outbox
    /// that cannot be read closes the folder and exits 73, naming the file.
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], store: StateStore) async throws -> AlertDelivery {
        let durable = durableSinks(ruleSet: ruleSet, among: sinks.keys)
        let dispatcher = ReliableDispatcher(sinks: sinks, durable: durable, outbox: store.outbox,
                                            configuration: .init(definitions: ruleSet.sinks.values))
        do {
            try await dispatcher.start()
        } catch {
            throw StateOption.unusable(store, error, doing: "cannot read the outbox")
        }
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
}
