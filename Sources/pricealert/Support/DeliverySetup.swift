import AlertModel
import AlertOutbox
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore
import Platform

/// How a command's options choose its `AlertDelivery`: which sinks are durable, and whether a
/// state folder (and so the outbox) is in use.
extension AlertDelivery {
    /// The outbox is used when `--state` is given or a rule in use notifies a webhook/exec sink.
    /// Silences come from the state folder (the default one without `--state`).
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        let durable = ruleSet.durableSinks(among: sinks.keys)
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
        let durable = ruleSet.durableSinks(among: sinks.keys)
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
        _ = await delivery.restore(held)
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
}
