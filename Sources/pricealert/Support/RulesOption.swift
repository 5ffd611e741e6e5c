import AlertRules
import ArgumentParser

/// `--rules FILE...`, required: the rule files a command evaluates, in order. Both
/// `--rules A B` and `--rules A --rules B` give [A, B].
struct RulesOption: ParsableArguments {
    @Option(
        name: .customLong("rules"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "Rule files, evaluated together in the order given (--rules A B, or --rules A --rules B).",
            valueName: "file"))
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one --rules file") }
    }

    /// The rule files loaded together; exits 65/66 with every problem printed.
    func load() throws -> RuleSet {
        try Inputs.rules(files)
    }
}
