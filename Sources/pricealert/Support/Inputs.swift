import AlertPipeline
import AlertRules
import AlertSinks

/// `CommandInputs` for the commands that exit on what is wrong (`ExitCodes.exiting`).
enum Inputs {
    /// Loads rule files together; prints every problem with its place and exits 65/66.
    static func rules(_ paths: [String]) throws -> RuleSet {
        try ExitCodes.exiting { try CommandInputs.rules(paths) }
    }

    /// What loading rule files gave, or every problem printed and the exit (65, 66).
    static func rules<T>(_ result: Result<T, RuleLoadFailure>) throws -> T {
        try ExitCodes.exiting { try CommandInputs.rules(result) }
    }

    /// Opens the sinks that enabled rules notify; exits 73 naming the sink when one cannot be
    /// set up.
    static func sinks(for ruleSet: RuleSet) throws -> [String: any Sink] {
        try ExitCodes.exiting { try CommandInputs.sinks(for: ruleSet) }
    }
}
