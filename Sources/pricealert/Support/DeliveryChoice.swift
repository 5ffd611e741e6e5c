import AlertPipeline
import AlertRules
import AlertSinks
import AlertStore
import ArgumentParser
import Platform

/// The delivery a command's `--state` chooses (`AlertDelivery.usesOutbox`); what cannot be set
/// up is written to standard error, with exit 65 (quiet hours' time zone) or 73.
extension AlertDelivery {
    /// Silences come from the state folder (the default one without `--state`).
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], state: StateOption) async throws -> AlertDelivery {
        guard usesOutbox(ruleSet: ruleSet, sinks: sinks, stateNamed: state.path != nil) else {
            let silences = try SilenceCommand.load(state.path)
            do {
                return try direct(ruleSet: ruleSet, sinks: sinks, silences: silences)
            } catch {
                throw failed(error)
            }
        }
        return try await make(ruleSet: ruleSet, sinks: sinks, store: state.open())
    }

    /// Delivery through the outbox of `store` (`AlertDelivery.open`).
    static func make(ruleSet: RuleSet, sinks: [String: any Sink], store: any DurableStore) async throws -> AlertDelivery
    {
        do {
            return try await open(ruleSet: ruleSet, sinks: sinks, store: store)
        } catch {
            throw failed(error)
        }
    }

    private static func failed(_ error: DeliverySetupError) -> ExitCode {
        StandardError.write("pricealert: error: \(error)")
        return error.isDataError ? ExitCodes.dataError : ExitCodes.stateUnusable
    }
}
