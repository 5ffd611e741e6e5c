import AlertCore

/// `when`: exactly one of `price` or `change` (Docs/rules.md#conditions).
extension FileChecker {
    static let conditionKeys = ["price", "change"]
    static let priceOperators = ["above", "below", "crossesAbove", "crossesBelow", "inside", "outside"]
    static let changeKeys = ["window", "above", "below"]

    mutating func condition(_ when: JSONNode) -> Condition? {
        guard let members = object(when, "'when'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.conditionKeys)
        let given = members.filter { Self.conditionKeys.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isEmpty { error("'when' needs exactly one condition: 'price' or 'change'", at: when.position) }
            return nil
        }
        for extra in given.dropFirst() {
            error("'when' has more than one condition ('\(chosen.key)' and '\(extra.key)'); use one rule for each",
                  at: extra.keyPosition)
        }
        let price = members["price"].flatMap { priceCondition($0.value) }
        let change = members["change"].flatMap { changeCondition($0.value) }
        guard given.count == 1 else { return nil }
        return chosen.key == "price" ? price.map(Condition.price) : change
    }

    private mutating func priceCondition(_ node: JSONNode) -> PriceCondition? {
        guard let members = object(node, "'price'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.priceOperators, noun: "operator")
        let given = members.filter { Self.priceOperators.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isEmpty {
                error("'price' needs exactly one operator: above, below, crossesAbove, crossesBelow, inside or outside",
                      at: node.position)
            }
            return nil
        }
        for extra in given.dropFirst() {
            error("'price' has more than one operator ('\(chosen.key)' and '\(extra.key)'); use one rule for each",
                  at: extra.keyPosition)
        }
        let conditions = given.map { priceOperator($0) }
        return given.count == 1 ? conditions[0] : nil
    }

    private mutating func priceOperator(_ member: JSONMember) -> PriceCondition? {
        let name = "'\(member.key)'"
        switch member.key {
        case "above": return threshold(member.value, name).map(PriceCondition.above)
        case "below": return threshold(member.value, name).map(PriceCondition.below)
        case "crossesAbove": return threshold(member.value, name).map(PriceCondition.crossesAbove)
        case "crossesBelow": return threshold(member.value, name).map(PriceCondition.crossesBelow)
        case "inside": return range(member.value, name).map(PriceCondition.inside)
        default: return range(member.value, name).map(PriceCondition.outside)
        }
    }

    private mutating func threshold(_ node: JSONNode, _ name: String) -> Double? {
        number(node, name, limit: Limits.priceThreshold)
    }

    /// `[L, H]`: two price thresholds with `L < H`.
    private mutating func range(_ node: JSONNode, _ name: String) -> (Double, Double)? {
        guard case .array(let bounds) = node.value else {
            error("\(name) must be an array of two numbers [low, high], found \(node.value.typeName)", at: node.position)
            return nil
        }
        guard bounds.count == 2 else {
            error("\(name) must have exactly two numbers [low, high], found \(bounds.count)", at: node.position)
            return nil
        }
        let low = threshold(bounds[0], "\(name) low bound")
        let high = threshold(bounds[1], "\(name) high bound")
        guard let low, let high else { return nil }
        guard low < high else {
            error("\(name) low bound must be less than high bound, found [\(JSONNumber.format(low)), \(JSONNumber.format(high))]",
                  at: node.position)
            return nil
        }
        return (low, high)
    }

    private mutating func changeCondition(_ node: JSONNode) -> Condition? {
        guard let members = object(node, "'change'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.changeKeys)
        let window = requireKey("window", in: node, members, suggested: suggested).flatMap { changeWindow($0.value) }
        let given = members.filter { $0.key == "above" || $0.key == "below" }
        if given.isEmpty, suggested.isDisjoint(with: ["above", "below"]) {
            error("'change' needs one of 'above' or 'below'", at: node.position)
        }
        for extra in given.dropFirst() {
            error("'change' takes only one of 'above' or 'below'", at: extra.keyPosition)
        }
        let thresholds = given.map { number($0.value, "'\($0.key)'", limit: Limits.changeThreshold) }
        guard let window, given.count == 1, let threshold = thresholds[0] else { return nil }
        return .change(window: window, given[0].key == "above" ? .above(threshold) : .below(threshold))
    }

    /// A window is a whole number of minutes, at least one (Docs/rules.md, "Change windows"),
    /// at most `Limits.window`; 24h qualifies.
    private mutating func changeWindow(_ node: JSONNode) -> Int64? {
        guard let millis = duration(node, "'window'", limit: Limits.window), case .string(let text) = node.value else {
            return nil
        }
        if millis < 60_000 {
            error("'window' must be at least 1 minute, found \(UserText.double(text))", at: node.position)
            return nil
        }
        if millis % 60_000 != 0 {
            error("'window' must be a whole number of minutes, found \(UserText.double(text))", at: node.position)
            return nil
        }
        return millis
    }
}
