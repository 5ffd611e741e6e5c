import AlertPostgres
import ArgumentParser
import Logging
import Platform

/// `--store postgres://…`: a PostgreSQL store instead of the state folder, for the commands that
/// read it (`outbox list|purge`, `silence`, `store status`). The URL's password is never printed:
/// messages name the URL with `***` in its place.
struct StoreOption: ParsableArguments {
    @Option(
        name: .customLong("store"),
        help: ArgumentHelp(
            "A PostgreSQL store instead of the state folder: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE (Docs/postgres.md).",
            valueName: "url"))
    var text: String?

    /// The URL given, or nil when none is (then the state folder is used); exits 64 naming the
    /// URL (without its password) when it cannot be read, or when `--state` is given too.
    func url(besides state: StateOption? = nil) throws -> PostgresURL? {
        guard let text else { return nil }
        if state?.path != nil {
            StandardError.write("pricealert: error: give --state or --store, not both")
            throw ExitCodes.usage
        }
        do {
            return try PostgresURL(text)
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.usage
        }
    }

    /// Connects to `url` and brings its schema up to date; exits 73 with the reason (the URL
    /// named without its password) when it cannot.
    static func open(_ url: PostgresURL) async throws -> PostgresStore {
        do {
            return try await PostgresStore.open(url, logger: Logger(label: "pricealert.postgres"))
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.stateUnusable
        }
    }

    /// `error` from `store`, written to standard error after `doing`; returns exit 73 to throw.
    static func failed(_ store: PostgresStore, _ error: any Error, doing: String) -> ExitCode {
        StandardError.write("pricealert: error: store \(store.url): \(doing): \(store.outbox.reason(error))")
        return ExitCodes.stateUnusable
    }
}
