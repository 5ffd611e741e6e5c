import AlertPipeline
import AlertPostgres
import AlertStore
import ArgumentParser
import Foundation
import Logging
import Platform

/// `--store postgres://…` (or `PRICEALERT_STORE`): a PostgreSQL store instead of the state
/// folder, for `run`, `check`, `outbox`, `silence` and `store status`. The URL's password is
/// never printed: messages name the URL with `***` in its place.
struct StoreOption: ParsableArguments {
    @Option(
        name: .customLong("store"),
        help: ArgumentHelp(
            "A PostgreSQL store instead of the state folder: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE (Docs/postgres.md); default $PRICEALERT_STORE unless --state is given.",
            valueName: "url"))
    var text: String?

    /// The variable that names the store when neither `--store` nor `--state` is given.
    static let variable = "PRICEALERT_STORE"

    /// The URL `--store` gives, else `PRICEALERT_STORE`'s unless `--state` names a folder; nil
    /// when neither does (then the state folder is used). Exits 64 naming the URL (without its
    /// password) and where it came from when it cannot be read, or when `--state` and `--store`
    /// are both given.
    func url(
        besides state: StateOption? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresURL? {
        let given: String
        var origin = ""
        if let text {
            if state?.path != nil {
                StandardError.write("pricealert: error: give --state or --store, not both")
                throw ExitCodes.usage
            }
            given = text
        } else if state?.path == nil, let value = environment[Self.variable], !value.isEmpty {
            given = value
            origin = "\(Self.variable): "
        } else {
            return nil
        }
        do {
            return try PostgresURL(given)
        } catch {
            StandardError.write("pricealert: error: \(origin)\(error)")
            throw ExitCodes.usage
        }
    }

    /// Connects to `url` and brings its schema up to date; exits 75 when the server cannot be
    /// reached or (`use.exclusive`) another pricealert holds the store, 73 otherwise, with the
    /// reason (the URL named without its password).
    static func open(_ url: PostgresURL, use: PostgresStore.Use = .init()) async throws -> PostgresStore {
        do {
            return try await PostgresStore.open(url, use: use, logger: Logger(label: "pricealert.postgres"))
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw error.unreachable || error.heldBy != nil ? ExitCodes.stateLocked : ExitCodes.stateUnusable
        }
    }

    /// The engine state the previous run saved; exits 73 naming the store when it cannot be read.
    static func loadSaved(_ store: any DurableStore) async throws -> SavedState {
        do {
            return SavedState(try await store.engine.load())
        } catch {
            StandardError.write("pricealert: error: \(store.place): \(store.describe(error))")
            await store.close()
            throw ExitCodes.stateUnusable
        }
    }

    /// `error` from `store`, written to standard error after `doing`; returns exit 73 to throw.
    static func failed(_ store: PostgresStore, _ error: any Error, doing: String) -> ExitCode {
        StandardError.write("pricealert: error: store \(store.url): \(doing): \(store.outbox.reason(error))")
        return ExitCodes.stateUnusable
    }
}
