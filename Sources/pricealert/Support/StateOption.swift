import AlertModel
import AlertPipeline
import AlertStore
import ArgumentParser

#if canImport(Glibc)
import Glibc
import Platform
#endif

/// `--state DIR`: the folder holding the outbox (default `$STATE_DIRECTORY`, else
/// `$XDG_STATE_HOME/pricealert`, else `~/.local/state/pricealert`).
struct StateOption: ParsableArguments {
    @Option(
        name: .customLong("state"),
        help: ArgumentHelp(
            "The state folder (engine state and outbox); default $STATE_DIRECTORY, $XDG_STATE_HOME/pricealert or ~/.local/state/pricealert.",
            valueName: "dir"))
    var path: String?

    /// The state folder `path` names (nil: the default one).
    static func folder(_ path: String?) throws(StateError) -> StateFolder {
        try StateAccess.folder(path)
    }

    /// Opens the state folder; exits 73 (75 when another pricealert holds it) with a message
    /// naming it when it cannot be used.
    func open() throws -> StateStore {
        try Self.opened(Self.open(path))
    }

    /// Opens the state folder's database to read only, without its lock (nil: there is none);
    /// exits 73 with a message naming it when it cannot be read.
    func openForReading() throws -> StateStore? {
        do {
            return try StateStore.openForReading(Self.folder(path))
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.stateUnusable
        }
    }

    /// Opens the state folder at `path` (nil: the default) without saying anything
    /// (`StateAccess.open`); `opened` then says what went wrong.
    static func open(_ path: String?) -> Result<StateStore, StateError> {
        StateAccess.open(path)
    }

    /// The store `open` opened; or its error written to standard error, and exit 73 (75 when
    /// another pricealert holds the folder) thrown.
    static func opened(_ result: Result<StateStore, StateError>) throws -> StateStore {
        try ExitCodes.exiting { try StateAccess.opened(result) }
    }

    /// What was saved in `store` cannot be read: says where and why (`StateAccess.unusable`),
    /// closes it, and returns the exit code (73) to throw.
    static func unusable(_ store: StateStore, _ error: any Error, doing: String? = nil) -> ExitCode {
        ExitCodes.said(StateAccess.unusable(store, error, doing: doing))
    }
}
