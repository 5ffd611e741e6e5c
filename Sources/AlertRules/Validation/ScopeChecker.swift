import AlertModel

/// A rule's scope: exactly one of `symbol`, `symbols`, `match`, in version 2 `portfolio`, or
/// in version 3 `series` (Docs/rules.md#scope, #portfolios, #series).
extension FileChecker {
    static let scopeKeys = ["symbol", "symbols", "match", "portfolio", "series"]
    static let matchKeys = ["future", "quote", "base", "active", "source"]

    mutating func scope(of rule: JSONNode, _ members: [JSONMember], suggested: Set<String>) -> Scope? {
        let given = members.filter { Self.scopeKeys.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isDisjoint(with: Self.scopeKeys) {
                let known =
                    switch version {
                    case 1: "'symbol', 'symbols' or 'match'"
                    case 2: "'symbol', 'symbols', 'match' or 'portfolio'"
                    default: "'symbol', 'symbols', 'match', 'portfolio' or 'series'"
                    }
                error("rule needs a scope: one of \(known)", at: rule.position)
            }
            return nil
        }
        for extra in given.dropFirst() {
            error(
                "rule has more than one scope ('\(chosen.key)' and '\(extra.key)'); give exactly one",
                at: extra.keyPosition)
        }
        let scopes = given.map { scopeValue($0) }
        return given.count == 1 ? scopes[0] : nil
    }

    mutating func scopeValue(_ member: JSONMember) -> Scope? {
        switch member.key {
        case "symbol":
            guard let symbol = nonEmptyString(member.value, "'symbol'"), notPortfolioSymbol(symbol, member.value),
                let key = self.key(symbol, at: member.value.position)
            else {
                return nil
            }
            return .symbols(oneSymbol(key))
        case "symbols":
            return symbolList(member.value)
        case "match":
            return marketFilter(member.value).map(Scope.match)
        case "series":
            // Whether the series exists, and what a `spread` series allows, is checked once
            // every file is read (`rule` records the reference).
            guard allowsVersion3(member) else { return nil }
            return nonEmptyString(member.value, "'series'").map(Scope.series)
        default:
            guard allowsVersion2(member) else { return nil }
            // Whether a portfolio of that name exists is checked once every file is read.
            guard let name = nonEmptyString(member.value, "'portfolio'") else { return nil }
            portfolioReferences.append(NamedPlace(name: name, position: member.value.position))
            return .portfolio(name)
        }
    }

    /// In a version 2 file, `@NAME` is a portfolio's symbol, which only `portfolio` rules see
    /// (in version 3 also a series', which only `series` rules see): a `symbol` rule on it
    /// could never fire. Version 1 files keep their meaning.
    private mutating func notPortfolioSymbol(_ symbol: String, _ node: JSONNode) -> Bool {
        guard version >= 2, symbol.hasPrefix("@") else { return true }
        let whose =
            version == 2
            ? "a portfolio's value: only a rule with \"portfolio\": NAME sees it"
            : "a portfolio's or series' value: only a rule with \"portfolio\": NAME or \"series\": NAME sees it"
        error("symbol \(UserText.double(symbol)) is \(whose)", at: node.position)
        return false
    }

    /// The scope key the rule is written with, for the conditions that depend on it.
    static func scopeKind(_ members: [JSONMember]) -> ScopeKind {
        let given = members.filter { scopeKeys.contains($0.key) }
        guard given.count == 1 else { return .unknown }
        switch given[0].key {
        case "match": return .match
        case "portfolio":
            if case .string(let name) = given[0].value.value { return .portfolio(name) }
            return .unknown
        case "series": return .series
        default: return .symbols
        }
    }

    /// `[symbol]`, one shared array per symbol: 100 000 rules over a few hundred symbols then
    /// hold a few hundred arrays, not 100 000.
    private mutating func oneSymbol(_ symbol: String) -> [String] {
        if let list = singleSymbols[symbol] { return list }
        let list = [symbol]
        singleSymbols[symbol] = list
        return list
    }

    private mutating func symbolList(_ node: JSONNode) -> Scope? {
        guard case .array(let elements) = node.value else {
            error("'symbols' must be an array of strings, found \(node.value.typeName)", at: node.position)
            return nil
        }
        guard !elements.isEmpty else {
            error("'symbols' must not be empty", at: node.position)
            return nil
        }
        let symbols = elements.map { element in
            nonEmptyString(element, "each symbol in 'symbols'").flatMap {
                notPortfolioSymbol($0, element) ? key($0, at: element.position) : nil
            }
        }
        guard symbols.allSatisfy({ $0 != nil }) else { return nil }
        // `["BTC", "btc"]` names one key; keep it once, in first-written order.
        var unique: [String] = []
        for symbol in symbols.compactMap({ $0 }) where !unique.contains(symbol) { unique.append(symbol) }
        return .symbols(unique)
    }

    /// An empty `match` would match every market, which is never what a rule means.
    private mutating func marketFilter(_ node: JSONNode) -> MarketFilter? {
        guard let members = object(node, "'match'") else { return nil }
        var filter = MarketFilter()
        let clean = isClean { checker in
            checker.checkKeys(members, allowed: Self.matchKeys)
            if members.isEmpty {
                let keys =
                    checker.version < 3
                    ? "'future', 'quote', 'base' or 'active'" : "'future', 'quote', 'base', 'active' or 'source'"
                checker.error(
                    "'match' is empty and would match every market; give at least one of \(keys)", at: node.position)
            }
            for member in members {
                let name = "'\(member.key)'"
                switch member.key {
                case "future": filter.future = checker.bool(member.value, name)
                case "active": filter.active = checker.bool(member.value, name)
                case "quote": filter.quote = checker.nonEmptyString(member.value, name)
                case "base": filter.base = checker.nonEmptyString(member.value, name)
                case "source":
                    if checker.allowsVersion3(member, name: "'match.source'") {
                        filter.sources = checker.matchSources(member.value)
                    }
                default: continue
                }
            }
        }
        return clean ? filter : nil
    }

    /// `source` in `match`: a source name or a non-empty array of them, each checked once
    /// every file's sources are known; a name given twice is kept once.
    private mutating func matchSources(_ node: JSONNode) -> [String]? {
        let elements: [JSONNode]
        switch node.value {
        case .string: elements = [node]
        case .array(let list):
            guard !list.isEmpty else {
                error("'source' in 'match' must not be empty", at: node.position)
                return nil
            }
            elements = list
        default:
            error(
                "'source' in 'match' must be a source name or an array of them, found \(node.value.typeName)",
                at: node.position)
            return nil
        }
        var names: [String] = []
        for element in elements {
            guard let name = nonEmptyString(element, "each source in 'match'") else { continue }
            sourceReferences.append(SourceReference(name: name, position: element.position, entry: nil))
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}
