import ArgumentParser

/// The exit codes pricealert documents (Docs/cli.md), after sysexits(3) so scripts and
/// systemd can tell a bad rule file from a missing input or a failed delivery.
enum ExitCodes {
    /// The command line names something that does not exist, such as an unknown sink (EX_USAGE).
    static let usage = ExitCode(64)
    /// Rule file errors, or a market list that is not one (EX_DATAERR).
    static let dataError = ExitCode(65)
    /// An input file (rules, ticks, markets) cannot be read (EX_NOINPUT).
    static let noInput = ExitCode(66)
    /// A source could not be reached, or answered something unusable (EX_UNAVAILABLE).
    static let unavailable = ExitCode(69)
    /// A sink cannot be set up: a file sink's folder is missing, a webhook's urlEnv not set (EX_CANTCREAT).
    static let cannotCreate = ExitCode(73)
    /// Some deliveries failed during the run, or still wait in the outbox (EX_IOERR). Every
    /// alert was still printed.
    static let deliveryFailed = ExitCode(74)
    /// The state folder cannot be used: not creatable, unreadable, damaged, written by a newer
    /// version, or an alert cannot be written to its outbox (EX_CANTCREAT, like a sink that
    /// cannot open).
    static let stateUnusable = ExitCode(73)
    /// The state folder is locked by another running pricealert (EX_TEMPFAIL: try later).
    static let stateLocked = ExitCode(75)
}
