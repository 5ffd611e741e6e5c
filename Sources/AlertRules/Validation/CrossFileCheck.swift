import AlertModel
import AlertPolicy
import JSONTokens

/// The checks that need every file: one namespace for rule ids, sink names, portfolio names
/// and series names, `notify` naming a sink that exists in any file, `portfolio` naming a
/// portfolio of any file, source names unique across files, qualified entries and
/// `match.source` naming a source of any file, and `series` naming a series of any file
/// (Docs/rules.md#file-structure, #portfolios, #version-3, #errors).
enum CrossFileCheck {
    static func run(_ checkers: inout [FileChecker]) {
        checkNamespace(&checkers)
        checkSinkReferences(&checkers)
        checkFallbacks(&checkers)
        checkPortfolioReferences(&checkers)
        checkSources(&checkers)
        checkSeriesReferences(&checkers)
    }

    /// The first definition (by file order, then place in the file) owns a name; every later
    /// one is reported at its own place. The built-in `stdout` sink owns nothing, so a rule
    /// may be called `stdout`.
    private static func checkNamespace(_ checkers: inout [FileChecker]) {
        // Names are looked up in a set; the first definitions of the few names defined twice
        // are found in a second pass, so no place is kept per name.
        var names = Set<String>(
            minimumCapacity: checkers.reduce(0) {
                $0 + $1.ruleIDs.count + $1.sinkNames.count + $1.portfolioNames.count + $1.seriesNames.count
            })
        var duplicates: [(file: Int, name: NamedPlace)] = []
        for index in checkers.indices {
            forEachName(of: checkers[index]) { name in
                if !names.insert(name.name).inserted { duplicates.append((index, name)) }
            }
        }
        guard !duplicates.isEmpty else {
            checkPortfolioSymbols(&checkers)
            return
        }
        names = []
        /// Each name defined twice: its first definition's file (checker index) and place.
        var owners = Dictionary(
            duplicates.map { ($0.name.name, (file: -1, position: SourceOffset(byte: 0))) },
            uniquingKeysWith: { first, _ in first })
        for index in checkers.indices {
            forEachName(of: checkers[index]) { name in
                if owners[name.name]?.file == -1 { owners[name.name] = (index, name.position) }
            }
        }
        // Lines and columns of the first definitions, one pass over each file that has any.
        var places: [Int: [SourceOffset: SourcePosition]] = [:]
        for file in Set(owners.values.map(\.file)) {
            places[file] = checkers[file].lines.positions(of: owners.values.filter { $0.file == file }.map(\.position))
        }
        for duplicate in duplicates {
            let owner = owners[duplicate.name.name]!
            let first = "\(checkers[owner.file].file):\(places[owner.file]![owner.position]!)"
            checkers[duplicate.file].error(
                "duplicate id \(UserText.single(duplicate.name.name)) (first defined at \(first))",
                at: duplicate.name.position)
        }
        checkPortfolioSymbols(&checkers)
    }

    /// Hands over the rule ids, sink names, portfolio names and series names of one file in the order they
    /// are written. Rule ids, the most, are recorded in that order already: they are merged
    /// with the others, not copied and sorted with them.
    private static func forEachName(of checker: FileChecker, _ body: (NamedPlace) -> Void) {
        let byPlace = { (a: NamedPlace, b: NamedPlace) in a.position < b.position }
        let others = (checker.sinkNames + checker.portfolioNames + checker.seriesNames).sorted(by: byPlace)
        let inOrder = zip(checker.ruleIDs, checker.ruleIDs.dropFirst()).allSatisfy { byPlace($0, $1) }
        let ids = inOrder ? checker.ruleIDs : checker.ruleIDs.sorted(by: byPlace)
        var next = 0
        for id in ids {
            while next < others.count, byPlace(others[next], id) {
                body(others[next])
                next += 1
            }
            body(id)
        }
        for other in others[next...] { body(other) }
    }

    /// Two portfolio or series names that differ only in case would share one `@NAME` symbol.
    private static func checkPortfolioSymbols(_ checkers: inout [FileChecker]) {
        var owners: [String: (noun: String, name: String, file: Int, position: SourceOffset)] = [:]
        for index in checkers.indices {
            let named =
                checkers[index].portfolioNames.map { ("portfolio", $0) }
                + checkers[index].seriesNames.map { ("series", $0) }
            for (noun, name) in named.sorted(by: { $0.1.position < $1.1.position }) {
                let symbol = "@" + Symbol.normalize(name.name)
                guard let owner = owners[symbol] else {
                    owners[symbol] = (noun, name.name, index, name.position)
                    continue
                }
                // Equal names are already duplicate ids.
                guard owner.name != name.name else { continue }
                let first = "\(checkers[owner.file].file):\(checkers[owner.file].lines.position(of: owner.position))"
                checkers[index].error(
                    "\(noun) \(UserText.single(name.name)) has the same symbol \(UserText.single(symbol)) "
                        + "as \(owner.noun) \(UserText.single(owner.name)) (first defined at \(first))",
                    at: name.position)
            }
        }
    }

    private static func checkSinkReferences(_ checkers: inout [FileChecker]) {
        var known = Set(checkers.flatMap { $0.sinkNames.map(\.name) })
        known.insert("stdout")
        let candidates = known.sorted()
        for index in checkers.indices {
            for reference in checkers[index].sinkReferences where !known.contains(reference.name) {
                checkers[index].error(
                    "unknown sink \(UserText.single(reference.name)) in 'notify'"
                        + Suggestion.hint(for: reference.name, among: candidates), at: reference.position)
            }
        }
    }

    /// `fallback` names a sink of any file, and no chain of fallbacks comes back to where it
    /// started; each cycle is reported once, at the `fallback` of its first sink by name.
    private static func checkFallbacks(_ checkers: inout [FileChecker]) {
        var known = Set(checkers.flatMap { $0.sinkNames.map(\.name) })
        known.insert("stdout")
        let candidates = known.sorted()
        var routes: [String: String] = [:]
        var places: [String: (file: Int, position: SourceOffset)] = [:]
        for index in checkers.indices {
            for reference in checkers[index].fallbackReferences {
                let target = reference.target
                guard known.contains(target.name) else {
                    checkers[index].error(
                        "unknown sink \(UserText.single(target.name)) in 'fallback'"
                            + Suggestion.hint(for: target.name, among: candidates), at: target.position)
                    continue
                }
                routes[reference.sink] = target.name
                places[reference.sink] = (index, target.position)
            }
        }
        while let cycle = FallbackRoutes.cycle(in: routes) {
            let place = places[cycle[0]]!
            checkers[place.file].error(
                "fallback cycle: " + cycle.map(UserText.single).joined(separator: " → "),
                at: place.position)
            for sink in cycle { routes[sink] = nil }
        }
    }

    /// `portfolio: NAME` must name a portfolio of any file, and a `pnl` leaf needs that
    /// portfolio to have a `cost`.
    private static func checkPortfolioReferences(_ checkers: inout [FileChecker]) {
        var costs: [String: Bool] = [:]
        for checker in checkers { costs.merge(checker.portfolioCosts) { first, _ in first } }
        let candidates = checkers.flatMap { $0.portfolioNames.map(\.name) }
        for index in checkers.indices {
            for reference in checkers[index].portfolioReferences where costs[reference.name] == nil {
                let hint = Suggestion.hint(for: reference.name, among: candidates)
                let known = candidates.isEmpty ? " (no file defines 'portfolios')" : hint
                checkers[index].error(
                    "unknown portfolio \(UserText.single(reference.name))\(known)", at: reference.position)
            }
            for reference in checkers[index].pnlReferences where costs[reference.name] == false {
                checkers[index].error(
                    "'pnl' needs portfolio \(UserText.single(reference.name)) to have a 'cost'",
                    at: reference.position)
            }
        }
    }

    /// A source name is defined once across all files; every qualified entry and
    /// `match.source` names a source of any file.
    private static func checkSources(_ checkers: inout [FileChecker]) {
        var owners: [String: (file: Int, position: SourceOffset)] = [:]
        for index in checkers.indices {
            for name in checkers[index].sourceNames {
                guard let owner = owners[name.name] else {
                    owners[name.name] = (index, name.position)
                    continue
                }
                // Twice in one file is the reader's duplicate key.
                guard owner.file != index else { continue }
                let first = "\(checkers[owner.file].file):\(checkers[owner.file].lines.position(of: owner.position))"
                checkers[index].error(
                    "duplicate source \(UserText.single(name.name)) (first defined at \(first))", at: name.position)
            }
        }
        let candidates = checkers.flatMap { $0.sourceNames.map(\.name) }
        for index in checkers.indices {
            for reference in checkers[index].sourceReferences where owners[reference.name] == nil {
                let hint = Suggestion.hint(for: reference.name, among: candidates)
                let known = candidates.isEmpty ? " (no file defines 'sources')" : hint
                let place = reference.entry.map { " in \(UserText.double($0))" } ?? " in 'match'"
                checkers[index].error(
                    "unknown source \(UserText.single(reference.name))\(place)\(known)", at: reference.position)
            }
        }
    }

    /// `series: NAME` names a series of any file; a rule on a `spread` series uses only
    /// `price` leaves and no `hysteresis` (a spread may be 0 or negative, where a hysteresis
    /// band in percent of the threshold has no meaning).
    private static func checkSeriesReferences(_ checkers: inout [FileChecker]) {
        var kinds: [String: SeriesDefinition.Kind] = [:]
        for checker in checkers { kinds.merge(checker.seriesKinds) { first, _ in first } }
        let candidates = checkers.flatMap { $0.seriesNames.map(\.name) }
        let known = Set(candidates)
        for index in checkers.indices {
            for reference in checkers[index].seriesReferences {
                guard known.contains(reference.name) else {
                    let hint = Suggestion.hint(for: reference.name, among: candidates)
                    let none = candidates.isEmpty ? " (no file defines 'series')" : hint
                    checkers[index].error(
                        "unknown series \(UserText.single(reference.name))\(none)", at: reference.position)
                    continue
                }
                guard kinds[reference.name] == .spread else { continue }
                let series = UserText.single(reference.name)
                for leaf in reference.otherLeaves {
                    checkers[index].error(
                        "'\(leaf.name)' is not allowed on spread series \(series): a rule on a spread uses only 'price'",
                        at: leaf.position)
                }
                if let hysteresis = reference.hysteresis {
                    checkers[index].error(
                        "'hysteresis' is not allowed on spread series \(series): a spread may be 0 or negative",
                        at: hysteresis)
                }
            }
        }
    }
}
