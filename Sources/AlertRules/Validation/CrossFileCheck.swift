/// The checks that need every file: one namespace for rule ids and sink names, and
/// `notify` naming a sink that exists in any file (spec §1, §8).
enum CrossFileCheck {
    static func run(_ checkers: inout [FileChecker]) {
        checkNamespace(&checkers)
        checkSinkReferences(&checkers)
    }

    /// The first definition (by file order, then place in the file) owns a name; every later
    /// one is reported at its own place. The built-in `stdout` sink owns nothing, so a rule
    /// may be called `stdout`.
    private static func checkNamespace(_ checkers: inout [FileChecker]) {
        var owners: [String: String] = [:]
        for index in checkers.indices {
            let names = (checkers[index].ruleIDs + checkers[index].sinkNames).sorted { $0.position < $1.position }
            for name in names {
                if let first = owners[name.name] {
                    checkers[index].error("duplicate id '\(name.name)' (first defined at \(first))", at: name.position)
                } else {
                    owners[name.name] = "\(checkers[index].file):\(name.position)"
                }
            }
        }
    }

    private static func checkSinkReferences(_ checkers: inout [FileChecker]) {
        var known = Set(checkers.flatMap { $0.sinkNames.map(\.name) })
        known.insert("stdout")
        let candidates = known.sorted()
        for index in checkers.indices {
            for reference in checkers[index].sinkReferences where !known.contains(reference.name) {
                checkers[index].error("unknown sink '\(reference.name)' in 'notify'"
                                      + Suggestion.hint(for: reference.name, among: candidates), at: reference.position)
            }
        }
    }
}
