import AlertModel

/// A rule's scope: exactly one of `symbol`, `symbols`, `match`, or in version 2 `portfolio`
/// (Docs/rules.md#scope, #portfolios).
extension FileChecker {
    static let scopeKeys = ["symbol", "symbols", "match", "portfolio"]
    static let matchKeys = ["future", "quote", "base", "active"]

    mutating func scope(of rule: JSONNode, _ members: [JSONMember], suggested: Set<String>) -> Scope? {
        let given = members.filter { Self.scopeKeys.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isDisjoint(with: Self.scopeKeys) {
                let known =
                    version == 1 ? "'symbol', 'symbols' or 'match'" : "'symbol', 'symbols', 'match' or 'portfolio'"
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
            guard let symbol = nonEmptyString(member.value, "'symbol'"), notPortfolioSymbol(symbol, member.value) else {
                return nil
            }
            return .symbols(oneSymbol(Symbol.normalize(symbol)))
        case "symbols":
            return symbolList(member.value)
        case "match":
            return marketFilter(member.value).map(Scope.match)
        default:
            guard allowsVersion2(member) else { return nil }
            // Whether a portfolio of that name exists is checked once every file is read.
            guard let name = nonEmptyString(member.value, "'portfolio'") else { return nil }
            portfolioReferences.append(NamedPlace(name: name, position: member.value.position))
            return .portfolio(name)
        }
    }

    /// In a version 2 file, `@NAME` is a portfolio's symbol, which only `portfolio` rules see:
    /// a `symbol` rule on it could never fire. Version 1 files keep their meaning.
    private mutating func notPortfolioSymbol(_ symbol: String, _ node: JSONNode) -> Bool {
        guard version == 2, symbol.hasPrefix("@") else { return true }
        error(
            "symbol \(UserText.double(symbol)) is a portfolio's value: only a rule with \"portfolio\": NAME sees it",
            at: node.position)
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
                notPortfolioSymbol($0, element) ? Symbol.normalize($0) : nil
            }
        }
        guard symbols.allSatisfy({ $0 != nil }) else { return nil }
        // `["BTC", "btc"]` names one symbol; keep it once, in first-written order.
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
                checker.error(
                    "'match' is empty and would match every market; give at least one of "
                        + "'future', 'quote', 'base' or 'active'", at: node.position)
            }
            for member in members {
                let name = "'\(member.key)'"
                switch member.key {
                case "future": filter.future = checker.bool(member.value, name)
                case "active": filter.active = checker.bool(member.value, name)
                case "quote": filter.quote = checker.nonEmptyString(member.value, name)
                case "base": filter.base = checker.nonEmptyString(member.value, name)
                default: continue
                }
            }
        }
        return clean ? filter : nil
    }
}
