import AlertCore

/// Checks one rule file: collects its diagnostics, and reads typed values out of JSON nodes,
/// reporting a wrong type or bad value at the value itself (spec §8).
struct FileChecker {
    let file: String
    private(set) var diagnostics: [Diagnostic] = []
    /// Valid rule ids and all sink names with their places, for the one namespace shared
    /// across files (spec §1).
    var ruleIDs: [NamedPlace] = []
    var sinkNames: [NamedPlace] = []
    /// Sink names used in `notify`, checked once every file's sinks are known.
    var sinkReferences: [NamedPlace] = []

    init(file: String) {
        self.file = file
    }

    mutating func error(_ message: String, at position: SourcePosition) {
        diagnostics.append(Diagnostic(file: file, line: position.line, column: position.column, message: message))
    }

    /// Runs `body` and tells whether it reported nothing, so a value is built only from a
    /// part that checked clean.
    mutating func isClean(_ body: (inout FileChecker) -> Void) -> Bool {
        let before = diagnostics.count
        body(&self)
        return diagnostics.count == before
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
            error("unknown \(noun) '\(member.key)'\(hint)", at: member.keyPosition)
        }
        return suggested
    }

    /// Reports `missing required key 'KEY'` at the object's `{`, unless the user wrote a key
    /// that was already suggested as this one.
    mutating func requireKey(_ key: String, in object: JSONNode, _ members: [JSONMember],
                             suggested: Set<String>) -> JSONMember? {
        if let member = members.first(where: { $0.key == key }) { return member }
        if !suggested.contains(key) { error("missing required key '\(key)'", at: object.position) }
        return nil
    }
}

/// A name and where it is written.
struct NamedPlace {
    var name: String
    var position: SourcePosition
}

extension Array where Element == JSONMember {
    subscript(key: String) -> JSONMember? {
        first { $0.key == key }
    }
}
