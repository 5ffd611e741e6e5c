import AlertPolicy
import AlertRules
import AlertSinks
import AlertStore

/// The state folder as the commands use it (`--state DIR`, default `$STATE_DIRECTORY`, else
/// `$XDG_STATE_HOME/pricealert`, else `~/.local/state/pricealert`): named, opened and locked,
/// read; what cannot be done is a `CommandFailure` naming the folder.
public enum StateAccess {
    /// The state folder `path` names (nil: the default one).
    public static func folder(_ path: String?) throws(StateError) -> StateFolder {
        try StateFolder.resolve(explicit: path, environment: StateFolder.processEnvironment)
    }

    /// Opens the state folder at `path` (nil: the default) without saying anything, for a
    /// command that opens it while it does something else; `opened` then says what went wrong.
    public static func open(_ path: String?) -> Result<StateStore, StateError> {
        Result { () throws(StateError) in
            try StateStore.open(folder(path))
        }
    }

    /// The store `open` opened; or exit 73 (75 when another pricealert holds the folder) with
    /// the reason.
    public static func opened(_ result: Result<StateStore, StateError>) throws(CommandFailure) -> StateStore {
        switch result {
        case .success(let store):
            return store
        case .failure(let error):
            throw CommandFailure(error.lockedBy == nil ? .cannotCreate : .tempFail, error: "\(error)")
        }
    }

    /// What was saved in `store` cannot be read: closes it, and returns exit 73 saying where
    /// (the database file for SQLite's errors) and why, after `doing` when given.
    public static func unusable(_ store: StateStore, _ error: any Error, doing: String? = nil) -> CommandFailure {
        let what = doing.map { "\($0): " } ?? ""
        let failure = CommandFailure(
            .cannotCreate, error: "state folder \(store.folder.path): \(what)\(store.describe(error))")
        store.close()
        return failure
    }

    /// The engine state the previous run saved; exit 73 naming the folder (closed) when it
    /// cannot be read.
    public static func loadSaved(_ store: StateStore) throws(CommandFailure) -> SavedState {
        do {
            return SavedState(try store.engineState.load())
        } catch {
            throw unusable(store, error)
        }
    }

    /// The silences of the state folder at `path` (nil: the default one), for evaluation; none
    /// when it has no silences file; exit 73 saying why when they cannot be read.
    public static func silences(_ path: String?) throws(CommandFailure) -> SilenceSet {
        do {
            return try SilenceSet.load(Result { () throws(StateError) in try folder(path) })
        } catch {
            throw CommandFailure(.cannotCreate, error: "\(error)")
        }
    }
}

/// The delivery a command's `--state` chooses (`AlertDelivery.usesOutbox`); what cannot be set
/// up fails with exit 65 (quiet hours' time zone) or 73.
extension AlertDelivery {
    /// Through the outbox of the state folder at `statePath` (nil: the default one) when
    /// `usesOutbox` says so, else straight to the sinks; silences come from that folder.
    public static func setUp(
        ruleSet: RuleSet, sinks: [String: any Sink], statePath: String?
    ) async throws(CommandFailure) -> AlertDelivery {
        guard usesOutbox(ruleSet: ruleSet, sinks: sinks, stateNamed: statePath != nil) else {
            let silences = try StateAccess.silences(statePath)
            do {
                return try direct(ruleSet: ruleSet, sinks: sinks, silences: silences)
            } catch {
                throw failure(error)
            }
        }
        return try await setUp(ruleSet: ruleSet, sinks: sinks, store: StateAccess.opened(StateAccess.open(statePath)))
    }

    /// Delivery through the outbox of `store` (`AlertDelivery.open`).
    public static func setUp(
        ruleSet: RuleSet, sinks: [String: any Sink], store: any DurableStore, standby: Bool = false
    ) async throws(CommandFailure) -> AlertDelivery {
        do {
            return try await open(ruleSet: ruleSet, sinks: sinks, store: store, standby: standby)
        } catch {
            throw failure(error)
        }
    }

    private static func failure(_ error: DeliverySetupError) -> CommandFailure {
        CommandFailure(error.isDataError ? .dataError : .cannotCreate, error: "\(error)")
    }
}
