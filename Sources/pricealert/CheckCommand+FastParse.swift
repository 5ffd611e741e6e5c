import AlertCore
import ArgumentParser

extension CheckCommand {
    /// `check`'s arguments as cron passes them, read without swift-argument-parser: its parse
    /// reflects over every option (a large share of a short `check`, mostly the Swift runtime
    /// searching protocol conformances; see Docs/performance.md). Only `--name value`,
    /// `--name=value`, `--rules A B …` and `--exit-code`, each option at most once but `--rules`,
    /// values that do not start with `-`, and a command that validates. Anything else (help, a
    /// short or unknown option, a missing or odd value, `--`, a validation error) gives nil, and
    /// the whole command line goes through ArgumentParser as always, with its messages.
    /// `FastParseTests` compares it with ArgumentParser's parse on the forms it reads, and lists
    /// forms it must leave alone.
    static func fastParse(_ arguments: [String]) -> CheckCommand? {
        var files: [String] = []
        var values: [String: String] = [:]
        var exitCode = false
        var i = 0
        while i < arguments.count {
            guard arguments[i].hasPrefix("--") else { return nil }
            var name = String(arguments[i].dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            i += 1
            if name == "exit-code" {
                guard value == nil, !exitCode else { return nil }
                exitCode = true
                continue
            }
            guard name == "rules" || valueOptions.contains(name) else { return nil }
            if value == nil, i < arguments.count {
                value = arguments[i]
                i += 1
            }
            guard let value, !value.isEmpty, !value.hasPrefix("-") else { return nil }
            if name == "rules" {
                files.append(value)
                // `--rules A B`: the values up to the next option, as ArgumentParser's `.upToNextOption`.
                while i < arguments.count, !arguments[i].hasPrefix("-") {
                    files.append(arguments[i])
                    i += 1
                }
            } else {
                guard values.updateValue(value, forKey: name) == nil else { return nil }
            }
        }
        var command = CheckCommand()
        var rules = RulesOption()
        rules.files = files
        command.rules = rules
        var state = StateOption()
        state.path = values["state"]
        command.state = state
        command.source = values["source"]
        command.endpoint = values["endpoint"]
        command.ticks = values["ticks"]
        command.history = values["history"]
        command.markets = values["markets"]
        command.exitCode = exitCode
        guard let marketsEvery = values["markets-every"].map(DurationArgument.init(argument:)) ?? defaultMarketsEvery,
              let drainTimeout = values["drain-timeout"].map(DurationArgument.init(argument:)) ?? defaultDrainTimeout
        else { return nil }
        command.marketsEvery = marketsEvery
        command.drainTimeout = drainTimeout
        command.format = nil
        if let format = values["format"] {
            guard let known = AlertOutputFormat(argument: format) else { return nil }
            command.format = known
        }
        do {
            try command.rules.validate()
            try command.state.validate()
            try command.validate()
        } catch {
            return nil
        }
        return command
    }

    /// The options that take one value (besides `--rules`, which may be repeated).
    private static let valueOptions: Set<String> = [
        "source", "endpoint", "ticks", "history", "markets", "markets-every", "format", "drain-timeout", "state",
    ]
}
