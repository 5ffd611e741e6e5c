import AlertModel

/// Version 2's top-level `portfolios`: name → holdings and cost (Docs/rules.md#portfolios).
extension FileChecker {
    static let portfolioKeys = ["holdings", "cost"]

    /// The file's valid portfolios, in file order; every name, valid or not, joins the
    /// namespace, so a rule naming a broken portfolio is not also told it is unknown.
    mutating func portfolios(_ node: JSONNode) -> [Portfolio] {
        guard let members = object(node, "'portfolios'") else { return [] }
        var portfolios: [Portfolio] = []
        for member in members {
            portfolioNames.append(NamedPlace(name: member.key, position: member.keyPosition))
            // A portfolio that is not even an object is not also blamed for a missing `cost`.
            var hasCost = true
            if case .object(let keys) = member.value.value { hasCost = keys["cost"] != nil }
            portfolioCosts[member.key] = hasCost
            let validName = Self.isName(member.key)
            if !validName {
                error(
                    "portfolio name must be 1 to 64 letters, digits, '.', '_' or '-', found \(UserText.double(member.key))",
                    at: member.keyPosition)
            }
            if let portfolio = portfolio(member.key, member.value), validName { portfolios.append(portfolio) }
        }
        return portfolios
    }

    private mutating func portfolio(_ name: String, _ node: JSONNode) -> Portfolio? {
        guard let members = object(node, "portfolio \(UserText.single(name))") else { return nil }
        var holdings: [Portfolio.Holding]?
        var cost: Double?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.portfolioKeys)
            holdings = checker.requireKey("holdings", in: node, members, suggested: suggested)
                .flatMap { checker.holdings($0.value) }
            if let member = members["cost"] {
                cost = checker.positive(member.value, "'cost'", limit: Limits.priceThreshold)
            }
        }
        guard clean, let holdings else { return nil }
        return Portfolio(name: name, holdings: holdings, cost: cost)
    }

    /// Symbol or key → amount, non-empty, symbols upper-cased, in file order.
    private mutating func holdings(_ node: JSONNode) -> [Portfolio.Holding]? {
        guard let members = object(node, "'holdings'") else { return nil }
        guard !members.isEmpty else {
            error("'holdings' must not be empty: give each symbol held and its amount", at: node.position)
            return nil
        }
        var holdings: [Portfolio.Holding] = []
        var firstPlace: [String: SourceOffset] = [:]
        let clean = isClean { checker in
            for member in members {
                // A qualified holding (version 3) names the key `source:SYMBOL`.
                let key = member.key.hasPrefix("@") ? nil : checker.key(member.key, at: member.keyPosition)
                let symbol = key ?? Symbol.normalize(member.key)
                if symbol.isEmpty {
                    checker.error("a holding's symbol must not be empty", at: member.keyPosition)
                } else if symbol.hasPrefix("@") {
                    checker.error(
                        "a holding's symbol must not start with '@' (those are portfolio values), found "
                            + UserText.double(member.key), at: member.keyPosition)
                } else if let first = firstPlace[symbol] {
                    checker.error(
                        "holding \(UserText.single(symbol)) is given twice (symbols ignore case)",
                        at: member.keyPosition, first: first)
                } else {
                    firstPlace[symbol] = member.keyPosition
                }
                let amount = checker.positive(
                    member.value, "amount of \(UserText.single(member.key))",
                    limit: Limits.priceThreshold)
                if let amount { holdings.append(Portfolio.Holding(symbol: symbol, amount: amount)) }
            }
        }
        return clean ? holdings : nil
    }
}
