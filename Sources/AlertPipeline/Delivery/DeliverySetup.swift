import AlertModel
import AlertOutbox
import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore

/// Why delivery cannot be set up; `description` names the file or folder, or the time zone,
/// and says why. A command writes it and exits 65 (`isDataError`) or 73.
public enum DeliverySetupError: Error, CustomStringConvertible {
    /// The outbox (or what the policy stages held) cannot be read; `place` names the state
    /// folder or the store.
    case outboxUnreadable(place: String, reason: String)
    case silencesUnreadable(SilencesUnreadable)
    /// Quiet hours name a time zone this system does not know.
    case unknownTimeZone(String)

    public var description: String {
        switch self {
        case .outboxUnreadable(let place, let reason): "\(place): cannot read the outbox: \(reason)"
        case .silencesUnreadable(let error): "\(error)"
        case .unknownTimeZone(let name): "quiet hours: unknown time zone \(UserText.double(name))"
        }
    }

    /// A rule file's error (65), rather than the state folder's (73).
    public var isDataError: Bool {
        if case .unknownTimeZone = self { true } else { false }
    }
}

/// How a command chooses its `AlertDelivery`: which sinks are durable, and whether a state
/// folder (and so the outbox) is in use.
extension AlertDelivery {
    /// The outbox is used when a state folder is named (`--state`) or a rule in use notifies a
    /// webhook/exec sink.
    public static func usesOutbox(ruleSet: RuleSet, sinks: [String: any Sink], stateNamed: Bool) -> Bool {
        stateNamed || !ruleSet.durableSinks(among: sinks.keys).isEmpty
    }

    /// Delivery straight to the sinks, without an outbox, under `silences`.
    public static func direct(
        ruleSet: RuleSet, sinks: [String: any Sink], silences: SilenceSet
    ) throws(DeliverySetupError) -> AlertDelivery {
        AlertDelivery(
            route: .direct(Dispatcher(sinks: sinks)), policy: try policy(ruleSet, silences: silences, journal: nil))
    }

    /// Delivery through the outbox of an opened state folder or store, which `finish` closes;
    /// the policy stages get back what they held when it was last used, and its silences apply.
    /// When the outbox, what the stages held or the silences cannot be read, or quiet hours name
    /// an unknown time zone, the store is closed and the error thrown.
    /// `standby`: one of several instances sharing a store starts sending nothing: neither
    /// what the outbox holds nor what the policy stages held (every instance delivers the
    /// outbox by claims; the home lease's leader feeds the stages from the journal,
    /// `DeliveryPolicy.follow`).
    public static func open(
        ruleSet: RuleSet, sinks: [String: any Sink], store: any DurableStore, standby: Bool = false
    ) async throws(DeliverySetupError) -> AlertDelivery {
        let durable = ruleSet.durableSinks(among: sinks.keys)
        let dispatcher = ReliableDispatcher(
            sinks: sinks, durable: durable, outbox: store.deliveries,
            configuration: .init(definitions: ruleSet.sinks.values))
        let held: [PolicyStateStore.Pending]
        let policy: DeliveryPolicy
        do {
            try await dispatcher.start(loadingPending: !standby)
            held = standby ? [] : try await store.journal.load()
        } catch {
            await store.close()
            throw .outboxUnreadable(place: store.place, reason: store.describe(error))
        }
        do throws(DeliverySetupError) {
            let silences: SilenceSet
            if let folder = store.localFolder {
                do {
                    silences = try SilenceSet.load(.success(folder))
                } catch {
                    throw .silencesUnreadable(error)
                }
            } else {
                do {
                    silences = SilenceSet(records: try await store.silenceRecords())
                } catch {
                    throw .silencesUnreadable(
                        SilencesUnreadable(
                            description: "\(store.place): cannot read the silences: \(store.describe(error))"))
                }
            }
            policy = try Self.policy(ruleSet, silences: silences, journal: store.journal)
        } catch {
            await store.close()
            throw error
        }
        let delivery = AlertDelivery(route: .reliable(dispatcher, store), policy: policy)
        _ = await delivery.restore(held)
        return delivery
    }

    private static func policy(
        _ ruleSet: RuleSet, silences: SilenceSet, journal: (any PolicyJournal)?
    ) throws(DeliverySetupError) -> DeliveryPolicy {
        do {
            return try DeliveryPolicy(ruleSet: ruleSet, silences: silences, journal: journal)
        } catch {
            throw .unknownTimeZone(error.name)
        }
    }
}
