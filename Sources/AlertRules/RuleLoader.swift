import AlertModel

/// Turns rule files into a `RuleSet`, or into every error of every file at once (Docs/rules.md#errors).
public enum RuleLoader {
    /// Reads and checks `files` together: rule ids and sink names share one namespace and
    /// `notify` may name a sink of any file. Diagnostics are sorted by file (in the order
    /// given), then line, then column. Any error means no `RuleSet`.
    ///
    /// With `cachedRules` (what the rules cache holds for these very bytes) the files' rules are
    /// passed over, not read: only versions, sinks, portfolios and defaults are, and the rules
    /// are those (and `expirations` is empty).
    /// `rulesEnds` (the `RuleSet.rulesEnds` of a read of the same bytes) says where each file's
    /// rules end, so they are not even walked over.
    ///
    /// `sinkTypes` are the sink kinds a `type` may name, each with the check of its own keys:
    /// `SinkRegistry.checks` in AlertSinks, where each kind registers itself.
    public static func load(
        _ files: [RuleSource], sinkTypes: [SinkTypeCheck], cachedRules: [Rule]? = nil,
        rulesEnds: [Int?] = []
    ) -> Result<RuleSet, RuleFileErrors> {
        var checkers: [FileChecker] = []
        var rules: [Rule] = []
        var sinks: [SinkDefinition] = []
        var portfolios: [Portfolio] = []
        var sources: [SourceDefinition] = []
        var series: [SeriesDefinition] = []
        var ends: [Int?] = []
        for (i, file) in files.enumerated() {
            var checker = FileChecker(file: file.path, bytes: file.bytes, sinkTypes: sinkTypes)
            // Rules are checked as they are read, so a big file is never one syntax tree.
            let document =
                cachedRules != nil
                ? JSONReader.read(file.bytes, skipping: "rules", to: i < rulesEnds.count ? rulesEnds[i] : nil)
                : JSONReader.read(file.bytes, streaming: "rules") { node, before in
                    checker.streamedRule(node, before: before)
                }
            ends.append(document.streamedEnd)
            if let root = document.root {
                let contents = checker.ruleFile(root)
                // The first file's rules are taken as they are: appending them to an empty array
                // would copy them while both live, doubling the rules' memory at the peak.
                if rules.isEmpty { rules = contents.rules } else { rules += contents.rules }
                sinks += contents.sinks
                portfolios += contents.portfolios
                sources += contents.sources
                series += contents.series
            } else {
                // A syntax error stops reading; what was checked before it is not reported.
                checker = FileChecker(file: file.path, bytes: file.bytes, sinkTypes: sinkTypes)
            }
            for problem in document.errors {
                checker.error(problem.message, at: problem.position, first: problem.first)
            }
            checkers.append(checker)
        }
        CrossFileCheck.run(&checkers)
        let diagnostics = checkers.flatMap(\.diagnostics)
        guard diagnostics.isEmpty else { return .failure(RuleFileErrors(diagnostics: diagnostics)) }
        var byName = [SinkDefinition.builtinStdout.name: SinkDefinition.builtinStdout]
        for sink in withholdingSecrets(sinks) { byName[sink.name] = sink }
        var ruleSet = RuleSet(rules: cachedRules ?? rules, sinks: byName, rulesEnds: ends, portfolios: portfolios)
        ruleSet.expirations = checkers.flatMap(\.expirationPlaces)
        ruleSet.sources = sources
        ruleSet.series = series
        ruleSet.ignoreHysteresisOnSpreads()
        return .success(ruleSet)
    }

    /// `sinks` with every sink that starts programs told to withhold the variables that any
    /// sink of any file reads a secret from (`SinkKind.secretVariables`): a notifier never sees
    /// another sink's secrets.
    static func withholdingSecrets(_ sinks: [SinkDefinition]) -> [SinkDefinition] {
        let secrets = Set(sinks.flatMap(\.kind.secretVariables))
        guard !secrets.isEmpty else { return sinks }
        return sinks.map { sink in
            var withheld = sink
            withheld.kind = sink.kind.withholding(secrets.sorted())
            return withheld
        }
    }
}
