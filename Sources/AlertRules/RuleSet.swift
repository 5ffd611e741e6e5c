import AlertCore

/// Every rule and sink of the rule files given together, validated as Docs/rules.md says.
/// Rules are in evaluation order: files in the order given, rules in file order.
public struct RuleSet: Sendable {
    public var rules: [Rule]
    /// All sinks by name, including the built-in `stdout` unless a file defines that name.
    public var sinks: [String: SinkDefinition]
    /// Per file (in the order given), the byte offset just past its `rules` array, when it has
    /// one: with the same bytes, `RuleLoader.load(_:cachedRules:rulesEnds:)` jumps there.
    public var rulesEnds: [Int?]
    /// Every file's portfolios, files in the order given, each file's in its order.
    public var portfolios: [Portfolio]

    public init(rules: [Rule], sinks: [String: SinkDefinition], rulesEnds: [Int?] = [], portfolios: [Portfolio] = []) {
        self.rules = rules
        self.sinks = sinks
        self.rulesEnds = rulesEnds
        self.portfolios = portfolios
    }
}

/// One problem in a rule file, with its place: prints as `FILE:LINE:COLUMN: error: MESSAGE`.
/// `file` is the path as the user gave it; line and column are 1-based, columns count characters.
public struct Diagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "\(file):\(line):\(column): error: \(message)" }
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
    /// The sinks that enabled rules notify, in first-use order: the ones a process opens.
    public var usedSinks: [String] {
        var used: [String] = []
        for rule in rules where rule.enabled {
            for name in rule.notify where !used.contains(name) { used.append(name) }
        }
        return used
    }
}
