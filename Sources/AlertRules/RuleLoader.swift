import AlertCore

/// Turns rule files into a `RuleSet`, or into every error of every file at once (spec §8).
public enum RuleLoader {
    /// Reads and checks `files` together: rule ids and sink names share one namespace and
    /// `notify` may name a sink of any file. Diagnostics are sorted by file (in the order
    /// given), then line, then column. Any error means no `RuleSet`.
    public static func load(_ files: [RuleSource]) -> Result<RuleSet, RuleFileErrors> {
        var checkers: [FileChecker] = []
        var rules: [Rule] = []
        var sinks: [SinkDefinition] = []
        for file in files {
            var checker = FileChecker(file: file.path)
            let document = JSONReader.read(file.bytes)
            for problem in document.errors { checker.error(problem.message, at: problem.position) }
            if let root = document.root {
                let contents = checker.ruleFile(root)
                rules += contents.rules
                sinks += contents.sinks
            }
            checkers.append(checker)
        }
        CrossFileCheck.run(&checkers)
        let diagnostics = checkers.flatMap { checker in
            checker.diagnostics.enumerated()
                .sorted { ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset) }
                .map(\.element)
        }
        guard diagnostics.isEmpty else { return .failure(RuleFileErrors(diagnostics: diagnostics)) }
        var byName = [SinkDefinition.builtinStdout.name: SinkDefinition.builtinStdout]
        for sink in sinks { byName[sink.name] = sink }
        return .success(RuleSet(rules: rules, sinks: byName))
    }
}
