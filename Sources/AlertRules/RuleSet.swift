import AlertModel

/// Every rule and sink of the rule files given together, validated as Docs/rules.md says.
/// Rules are in evaluation order: files in the order given, rules in file order.
public struct RuleSet: Sendable {
    public var rules: [Rule]
    /// All sinks by name, including the built-in `stdout` unless a file defines that name.
    public var sinks: [String: SinkDefinition]
    /// Per file (in the order given), the byte offset just past its `rules` array, when it has
    /// one: with the same bytes, `RuleLoader.load(_:cachedRules:rulesEnds:)` jumps there.
    public var rulesEnds: [Int?]
    /// Every file's portfolios (version 2), files in the order given, each file's in its order.
    public var portfolios: [Portfolio]
    /// The rules with an `expires`, where it is written: `validate` warns about those past.
    public var expirations: [RuleExpiration] = []
    /// Every file's `sources` (version 3), files in the order given, each file's in its order.
    public var sources: [SourceDefinition] = []
    /// Every file's `series` (version 3), files in the order given, each file's in its order.
    public var series: [SeriesDefinition] = []

    public init(rules: [Rule], sinks: [String: SinkDefinition], rulesEnds: [Int?] = [], portfolios: [Portfolio] = []) {
        self.rules = rules
        self.sinks = sinks
        self.rulesEnds = rulesEnds
        self.portfolios = portfolios
    }

    /// The sinks among `names` whose alerts must not be lost (`SinkKind.isDurable`); a name the
    /// rule files do not define is not durable.
    public func durableSinks(among names: some Sequence<String>) -> Set<String> {
        Set(names.filter { sinks[$0]?.kind.isDurable == true })
    }
}

/// One problem in a rule file, with its place: prints as `FILE:LINE:COLUMN: error: MESSAGE`
/// (or `warning:`). `file` is the path as the user gave it; line and column are 1-based,
/// columns count characters.
public struct Diagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        case error, warning
    }

    public var file: String
    public var line: Int
    public var column: Int
    public var message: String
    public var severity: Severity

    public init(file: String, line: Int, column: Int, message: String, severity: Severity = .error) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.severity = severity
    }

    public var description: String { "\(file):\(line):\(column): \(severity.rawValue): \(message)" }
}

/// A rule's `expires` instant and where it is written.
public struct RuleExpiration: Sendable, Equatable {
    public var rule: String
    /// Epoch milliseconds.
    public var expires: Int64
    public var file: String
    public var line: Int
    public var column: Int

    public init(rule: String, expires: Int64, file: String, line: Int, column: Int) {
        self.rule = rule
        self.expires = expires
        self.file = file
        self.line = line
        self.column = column
    }
}

/// Every problem found in a set of rule files, sorted by file (in the order given), line and
/// column. `Result` needs an `Error` type, which a plain `[Diagnostic]` is not.
public struct RuleFileErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var diagnostics: [Diagnostic]

    public init(diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One `FILE:LINE:COLUMN: error: MESSAGE` line per diagnostic.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension RuleSet {
    /// A warning for each rule already expired at `now` (epoch ms): it will never fire.
    public func expiryWarnings(now: Int64) -> [Diagnostic] {
        expirations.filter { $0.expires <= now }.map { expired in
            Diagnostic(
                file: expired.file, line: expired.line, column: expired.column,
                message: "rule '\(expired.rule)' expired at \(Timestamp.format(expired.expires)); it will never fire",
                severity: .warning)
        }
    }

    /// A rule on a `spread` series takes no hysteresis (its own is an error); a file's default
    /// one is meant for the rules it fits, and does not apply to it (Docs/rules.md#series).
    mutating func ignoreHysteresisOnSpreads() {
        let spreads = Set(series.filter { $0.kind == .spread }.map(\.name))
        guard !spreads.isEmpty else { return }
        for index in rules.indices {
            if case .series(let name) = rules[index].scope, spreads.contains(name) { rules[index].hysteresis = 0 }
        }
    }

    /// The sinks that enabled rules notify, in first-use order, then their fallbacks: the ones
    /// a process opens.
    public var usedSinks: [String] {
        var used: [String] = []
        for rule in rules where rule.enabled {
            for name in rule.notify where !used.contains(name) { used.append(name) }
        }
        return withFallbacks(used)
    }

    /// `names`, then the fallbacks their dead letters go on to (and theirs), each once.
    public func withFallbacks(_ names: [String]) -> [String] {
        var all = names
        var index = 0
        while index < all.count {
            if let fallback = sinks[all[index]]?.policy.fallback, !all.contains(fallback) { all.append(fallback) }
            index += 1
        }
        return all
    }
}
