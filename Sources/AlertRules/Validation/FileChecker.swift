import AlertModel
import JSONTokens

/// Checks one rule file: collects its diagnostics, and reads typed values out of JSON nodes,
/// reporting a wrong type or bad value at the value itself (Docs/rules.md#errors).
struct FileChecker {
    let file: String
    /// The file's text, for turning offsets into lines and columns.
    let lines: LineTable
    /// The sink kinds a `type` may name, each with the check of its keys.
    let sinkTypes: [SinkTypeCheck]
    /// Problems in the order found; `diagnostics` sorts them by place.
    var problems: [Problem] = []
    /// Valid rule ids and all sink names with their places, for the one namespace shared
    /// across files (Docs/rules.md#file-structure).
    var ruleIDs: [NamedPlace] = []
    var sinkNames: [NamedPlace] = []
    /// Sink names used in `notify`, checked once every file's sinks are known.
    var sinkReferences: [NamedPlace] = []
    /// Each sink's `fallback`, checked once every file's sinks are known.
    var fallbackReferences: [(sink: String, target: NamedPlace)] = []
    /// `symbol` scopes by symbol, shared (see `oneSymbol`).
    var singleSymbols: [String: [String]] = [:]
    /// The rules checked while the file was being read, if its `rules` were streamed.
    var streamed: StreamedRules?
    /// The file's `version`: 1, 2 or 3 (3 while it is missing or invalid, so that one wrong
    /// `version` is one error, not one per version 2 or 3 key).
    var version: UInt8 = 3
    /// Portfolio names with their places (they share the namespace), and whether each one,
    /// valid or not, is written with a `cost`.
    var portfolioNames: [NamedPlace] = []
    var portfolioCosts: [String: Bool] = [:]
    /// `portfolio: NAME` scopes, and the `pnl` leaves of such rules (name and place of the
    /// `pnl` key), checked once every file's portfolios are known.
    var portfolioReferences: [NamedPlace] = []
    var pnlReferences: [NamedPlace] = []
    /// `expires` of the valid rules, for `validate`'s warning about rules already expired.
    var expirations: [Expiration] = []
    /// Version 3: every source name defined, valid or not, with its place (unique across
    /// files), and the source names that qualified entries and `match.source` use, checked
    /// once every file's sources are known.
    var sourceNames: [NamedPlace] = []
    var sourceReferences: [SourceReference] = []
    /// Version 3: series names with their places (they share the namespace of rule ids), the
    /// kind of each valid one, and the `series: NAME` scopes, checked once every file's series
    /// are known.
    var seriesNames: [NamedPlace] = []
    var seriesKinds: [String: SeriesDefinition.Kind] = [:]
    var seriesReferences: [SeriesReference] = []

    struct Problem {
        var position: SourceOffset
        var message: String
        /// A place the message names after it, as `(first at line L, column C)`.
        var first: SourceOffset?
    }

    init(file: String, bytes: [UInt8], sinkTypes: [SinkTypeCheck] = []) {
        self.file = file
        lines = LineTable(bytes: bytes)
        self.sinkTypes = sinkTypes
    }

    mutating func error(_ message: String, at position: SourceOffset, first: SourceOffset? = nil) {
        problems.append(Problem(position: position, message: message, first: first))
    }

    /// Whether a version 2 key may be used here; in a version 1 file it is an error at the key
    /// naming the version it needs (`'all' needs "version": 2`).
    mutating func allowsVersion2(_ member: JSONMember, name: String? = nil) -> Bool {
        guard version == 1 else { return true }
        error("\(name ?? UserText.single(member.key)) needs \"version\": 2", at: member.keyPosition)
        return false
    }

    /// Whether a version 3 key may be used here; in a version 1 or 2 file it is an error at
    /// the key naming the version it needs (`'series' needs "version": 3`).
    mutating func allowsVersion3(_ member: JSONMember, name: String? = nil) -> Bool {
        guard version < 3 else { return true }
        error("\(name ?? UserText.single(member.key)) needs \"version\": 3", at: member.keyPosition)
        return false
    }

    /// The problems as diagnostics, by place (two at one place in the order found); every
    /// line and column is found in one pass over the file.
    var diagnostics: [Diagnostic] {
        let places = lines.positions(of: problems.map(\.position) + problems.compactMap(\.first))
        return problems.enumerated()
            .sorted { ($0.element.position, $0.offset) < ($1.element.position, $1.offset) }
            .map { _, problem in
                let place = places[problem.position]!
                let first = problem.first.map { JSONSyntaxError.mention(first: places[$0]!) } ?? ""
                return Diagnostic(file: file, line: place.line, column: place.column, message: problem.message + first)
            }
    }

    /// `expirations` with their lines and columns, found in one pass over the file.
    var expirationPlaces: [RuleExpiration] {
        let places = lines.positions(of: expirations.map(\.position))
        return expirations.map { expiration in
            let place = places[expiration.position]!
            return RuleExpiration(
                rule: expiration.rule, expires: expiration.millis, file: file,
                line: place.line, column: place.column)
        }
    }

    /// Runs `body` and tells whether it reported nothing, so a value is built only from a
    /// part that checked clean.
    mutating func isClean(_ body: (inout FileChecker) -> Void) -> Bool {
        let before = problems.count
        body(&self)
        return problems.count == before
    }

    /// Reports every key not in `allowed`, at the key, with a "did you mean" when one is close.
    /// Returns the keys that were suggested, so a "missing key" error for a key the user
    /// merely misspelled is not reported twice.
    @discardableResult
    mutating func checkKeys(_ members: [JSONMember], allowed: [String], noun: String = "key") -> Set<String> {
        var suggested: Set<String> = []
        for member in members where !allowed.contains(member.key) {
            let closest = Suggestion.closest(to: member.key, among: allowed)
            if let closest { suggested.insert(closest) }
            let hint = closest.map { " (did you mean '\($0)'?)" } ?? ""
            error("unknown \(noun) \(UserText.single(member.key))\(hint)", at: member.keyPosition)
        }
        return suggested
    }

    /// Reports `missing required key 'KEY'` at the object's `{`, unless the user wrote a key
    /// that was already suggested as this one.
    mutating func requireKey(
        _ key: String, in object: JSONNode, _ members: [JSONMember],
        suggested: Set<String>
    ) -> JSONMember? {
        if let member = members.first(where: { $0.key == key }) { return member }
        if !suggested.contains(key) { error("missing required key '\(key)'", at: object.position) }
        return nil
    }
}

/// A rule's `expires` instant (epoch ms), its id and the place of the value.
struct Expiration {
    var rule: String
    var millis: Int64
    var position: SourceOffset
}

/// A source name that a qualified entry (`source:SYMBOL`) or `match.source` uses, and where.
struct SourceReference {
    var name: String
    var position: SourceOffset
    /// The qualified entry as written; nil for a name in `match.source`.
    var entry: String?
}

/// A rule's `series: NAME` scope, with what a `spread` series does not allow in it: the keys
/// of its leaves other than `price` (inside `all`/`any` too) and its own `hysteresis`.
struct SeriesReference {
    var name: String
    var position: SourceOffset
    var otherLeaves: [NamedPlace]
    var hysteresis: SourceOffset?
}

/// A name and where it is written.
struct NamedPlace {
    var name: String
    var position: SourceOffset
}

extension Array where Element == JSONMember {
    subscript(key: String) -> JSONMember? {
        first { $0.key == key }
    }
}
