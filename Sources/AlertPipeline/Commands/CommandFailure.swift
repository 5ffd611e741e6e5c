/// The exit statuses pricealert documents (Docs/cli.md), after sysexits(3), so scripts and
/// systemd can tell a bad rule file from a missing input or a failed delivery.
public enum ExitStatus: Int32, Sendable {
    /// The command line names something that does not exist, such as an unknown source (EX_USAGE).
    case usage = 64
    /// Rule file errors, or a market list that is not one (EX_DATAERR).
    case dataError = 65
    /// An input file (rules, ticks, markets) cannot be read (EX_NOINPUT).
    case noInput = 66
    /// A source could not be reached, or answered something unusable (EX_UNAVAILABLE).
    case unavailable = 69
    /// A sink, a report file or the state folder cannot be set up or used, or an alert cannot be
    /// written to the outbox (EX_CANTCREAT).
    case cannotCreate = 73
    /// Some deliveries failed, or still wait in the outbox (EX_IOERR). Every alert was still
    /// listed.
    case ioError = 74
    /// The state folder is locked by another running pricealert (EX_TEMPFAIL: try later).
    case tempFail = 75
}

/// Why a command's use case (`check`, `replay`, and what they share with the other commands)
/// stops: its exit status and the lines that say why. The use cases never exit and never print
/// a failure themselves; the executable writes `lines` to standard error and exits with
/// `status`, in one place.
public struct CommandFailure: Error, Sendable {
    public var status: ExitStatus
    /// What to say on standard error, one line each; empty when the run said it already, as it
    /// happened (failed deliveries, sources that could not be reached).
    public var lines: [String]

    public init(_ status: ExitStatus, lines: [String]) {
        self.status = status
        self.lines = lines
    }

    /// `pricealert: error: MESSAGE`, then exit with `status`.
    public init(_ status: ExitStatus, error message: String) {
        self.init(status, lines: ["pricealert: error: \(message)"])
    }

    /// Exit with `status`, saying nothing more.
    public init(_ status: ExitStatus) {
        self.init(status, lines: [])
    }
}
