import AlertPipeline
import AlertRules
import AlertSinks
import AlertStore

/// The delivery a command's `--state` chooses (`AlertDelivery.setUp`); what cannot be set up is
/// written to standard error, with exit 65 (quiet hours' time zone) or 73.
extension AlertDelivery {
    /// Silences come from the state folder (the default one without `--state`).
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        try await ExitCodes.exitingAsync { try await setUp(ruleSet: ruleSet, sinks: sinks, statePath: state.path) }
    }

    /// Delivery through the outbox of `store` (`AlertDelivery.open`).
    static func make(
        ruleSet: RuleSet, sinks: [String: any Sink], store: any DurableStore, standby: Bool = false
    ) async throws -> AlertDelivery {
        try await ExitCodes.exitingAsync {
            try await setUp(ruleSet: ruleSet, sinks: sinks, store: store, standby: standby)
        }
    }
}
