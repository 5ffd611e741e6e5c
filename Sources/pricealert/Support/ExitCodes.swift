import AlertPipeline
import ArgumentParser
import Platform

/// The exit codes pricealert documents (Docs/cli.md): `ExitStatus`, after sysexits(3), under
/// the names the commands use.
enum ExitCodes {
    static let usage = ExitCode(ExitStatus.usage)
    static let dataError = ExitCode(ExitStatus.dataError)
    static let noInput = ExitCode(ExitStatus.noInput)
    static let unavailable = ExitCode(ExitStatus.unavailable)
    /// A sink cannot be set up: a file sink's folder is missing, a webhook's urlEnv not set.
    static let cannotCreate = ExitCode(ExitStatus.cannotCreate)
    /// Some deliveries failed during the run, or still wait in the outbox. Every alert was
    /// still printed.
    static let deliveryFailed = ExitCode(ExitStatus.ioError)
    /// The state folder cannot be used: not creatable, unreadable, damaged, written by a newer
    /// version, or an alert cannot be written to its outbox (like a sink that cannot open).
    static let stateUnusable = ExitCode(ExitStatus.cannotCreate)
    /// The state folder is locked by another running pricealert (try later).
    static let stateLocked = ExitCode(ExitStatus.tempFail)

    /// `failure` said on standard error, and its exit code to throw: the one place where a use
    /// case's `CommandFailure` becomes the process's exit.
    static func said(_ failure: CommandFailure) -> ExitCode {
        StandardError.write(lines: failure.lines)
        return ExitCode(failure.status)
    }

    /// `body`'s result; a `CommandFailure` it throws is said and exits (`said`).
    static func exiting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as CommandFailure {
            throw said(failure)
        }
    }

    /// `exiting` for an async `body`.
    static func exitingAsync<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as CommandFailure {
            throw said(failure)
        }
    }
}

extension ExitCode {
    init(_ status: ExitStatus) {
        self.init(status.rawValue)
    }
}
