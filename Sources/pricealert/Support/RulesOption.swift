import AlertRules
import ArgumentParser

/// `--rules FILE`, repeatable, required: the rule files a command evaluates, in order.
struct RulesOption: ParsableArguments {
    @Option(name: .customLong("rules"), help: "A rule file; repeat for several (evaluated in the order given).")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one --rules file") }
    }

    /// The rule files loaded together; exits 65/66 with every problem printed.
    func load() throws -> RuleSet {
        try Inputs.rules(files)
    }
}
