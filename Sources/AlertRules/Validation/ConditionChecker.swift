import AlertModel

/// `when`: exactly one condition; version 1 knows `price` and `change`, version 2 adds
/// `fromHigh`, `fromLow`, `pnl`, `move`, `listed` and the combinations `all`/`any`, version 3
/// `volume` (Docs/rules.md#conditions, #version-2, #volume).
extension FileChecker {
    static let conditionKeysV1 = ["price", "change"]
    static let conditionKeys =
        conditionKeysV1 + ["fromHigh", "fromLow", "move", "pnl", "all", "any", "listed", "volume"]
    static let priceOperators = ["above", "below", "crossesAbove", "crossesBelow", "inside", "outside"]
    static let changeKeys = ["window", "above", "below"]
    static let pnlKeys = ["above", "below"]
    static let moveKeys = ["percent", "step"]
    /// Levels of `all`/`any` inside one another.
    static let maxCombinationDepth = 3
    static let combinationSizes = 2...8

    /// What a condition object needs to know about where it is.
    struct ConditionPlace {
        /// How messages name the object: `'when'`, `each member of 'all'`.
        var name = "'when'"
        /// Levels of `all`/`any` around it.
        var depth = 0
        var scope: ScopeKind
    }

    /// The scope key a rule is written with, as far as conditions care (`pnl` needs a
    /// portfolio, `listed` a `match`); `unknown` when it has none or several.
    enum ScopeKind: Equatable {
        case symbols, match, portfolio(String), series, unknown
    }

    mutating func condition(_ when: JSONNode, _ place: ConditionPlace) -> Condition? {
        guard let members = object(when, place.name) else { return nil }
        let suggested = checkKeys(members, allowed: Self.conditionKeys)
        let given = members.filter { Self.conditionKeys.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isEmpty {
                let known =
                    switch version {
                    case 1: "'price' or 'change'"
                    case 2: "'price', 'change', 'fromHigh', 'fromLow', 'move', 'pnl', 'all', 'any' or 'listed'"
                    default:
                        "'price', 'change', 'fromHigh', 'fromLow', 'move', 'pnl', 'all', 'any', 'listed' or 'volume'"
                    }
                error("\(place.name) needs exactly one condition: \(known)", at: when.position)
            }
            return nil
        }
        for extra in given.dropFirst() {
            let advice = version == 1 ? "use one rule for each" : "combine them with 'all' or 'any'"
            error(
                "\(place.name) has more than one condition ('\(chosen.key)' and '\(extra.key)'); \(advice)",
                at: extra.keyPosition)
        }
        let conditions = given.map { leaf($0, place) }
        return given.count == 1 ? conditions[0] : nil
    }

    private mutating func leaf(_ member: JSONMember, _ place: ConditionPlace) -> Condition? {
        switch member.key {
        case "price": return priceCondition(member.value).map(Condition.price)
        case "change":
            return percentCondition(member.value, "'change'", windowed: true).map {
                Condition.change(window: $0.0, $0.1)
            }
        case "volume":
            guard allowsVersion3(member) else { return nil }
            return volume(member.value)
        default: break
        }
        guard allowsVersion2(member) else { return nil }
        switch member.key {
        case "fromHigh":
            return percentCondition(member.value, "'fromHigh'", windowed: true).map {
                Condition.fromHigh(window: $0.0, $0.1)
            }
        case "fromLow":
            return percentCondition(member.value, "'fromLow'", windowed: true).map {
                Condition.fromLow(window: $0.0, $0.1)
            }
        case "pnl": return pnl(member, place)
        case "move": return move(member, place)
        case "listed": return listed(member, place)
        default: return combination(member, place)
        }
    }

    /// `{"all"|"any": [C1, …, Cn]}`, 2 ≤ n ≤ 8, at most `maxCombinationDepth` levels deep.
    private mutating func combination(_ member: JSONMember, _ place: ConditionPlace) -> Condition? {
        let name = "'\(member.key)'"
        let depth = place.depth + 1
        guard depth <= Self.maxCombinationDepth else {
            error(
                "\(name) is nested \(depth) levels deep; at most \(Self.maxCombinationDepth) levels of 'all'/'any' are allowed",
                at: member.keyPosition)
            return nil
        }
        guard case .array(let elements) = member.value.value else {
            error(
                "\(name) must be an array of 2 to 8 conditions, found \(member.value.value.typeName)",
                at: member.value.position)
            return nil
        }
        let sized = Self.combinationSizes.contains(elements.count)
        if !sized {
            error("\(name) needs 2 to 8 conditions, found \(elements.count)", at: member.value.position)
        }
        let inner = ConditionPlace(name: "each member of \(name)", depth: depth, scope: place.scope)
        let conditions = elements.map { condition($0, inner) }
        guard sized, conditions.allSatisfy({ $0 != nil }) else { return nil }
        let members = conditions.compactMap { $0 }
        return member.key == "all" ? .all(members) : .any(members)
    }

    /// `{"percent": P}` or `{"step": S}`, never inside `all`/`any`.
    private mutating func move(_ member: JSONMember, _ place: ConditionPlace) -> Condition? {
        let inside = place.depth > 0
        if inside {
            error(
                "'move' cannot be inside 'all' or 'any': a move alerts against its own reference price",
                at: member.keyPosition)
        }
        guard let members = object(member.value, "'move'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.moveKeys)
        let given = members.filter { Self.moveKeys.contains($0.key) }
        if given.isEmpty, suggested.isDisjoint(with: Self.moveKeys) {
            error("'move' needs one of 'percent' or 'step'", at: member.value.position)
        }
        for extra in given.dropFirst() {
            error("'move' takes only one of 'percent' or 'step'", at: extra.keyPosition)
        }
        let values = given.map {
            positive(
                $0.value, "'\($0.key)'",
                limit: $0.key == "percent" ? Limits.changeThreshold : Limits.priceThreshold)
        }
        guard !inside, given.count == 1, let value = values[0] else { return nil }
        return .move(given[0].key == "percent" ? .percent(value) : .step(value))
    }

    /// `{"above"|"below": P}` on a portfolio rule; whether the portfolio has a `cost` is
    /// checked once every file's portfolios are known.
    private mutating func pnl(_ member: JSONMember, _ place: ConditionPlace) -> Condition? {
        switch place.scope {
        case .portfolio(let name):
            pnlReferences.append(NamedPlace(name: name, position: member.keyPosition))
        case .unknown:
            break
        case .symbols, .match, .series:
            error(
                #"'pnl' needs a portfolio rule ("portfolio": NAME): it compares a portfolio's value with its cost"#,
                at: member.keyPosition)
        }
        return percentCondition(member.value, "'pnl'", windowed: false).map { Condition.pnl($0.1) }
    }

    /// `true`, as the whole `when` of a `match` rule.
    private mutating func listed(_ member: JSONMember, _ place: ConditionPlace) -> Condition? {
        let clean = isClean { checker in
            if place.depth > 0 {
                checker.error("'listed' cannot be inside 'all' or 'any'", at: member.keyPosition)
            } else if place.scope != .match, place.scope != .unknown {
                checker.error(
                    "'listed' needs a 'match' rule: it fires for each new market the market list adds",
                    at: member.keyPosition)
            }
            if let listed = checker.bool(member.value, "'listed'"), !listed {
                checker.error("'listed' must be true, found false", at: member.value.position)
            }
        }
        return clean ? .listed : nil
    }

    /// `{"above"|"below": V}`, V a finite number ≥ 0, on the tick's 24-hour volume.
    private mutating func volume(_ node: JSONNode) -> Condition? {
        guard let members = object(node, "'volume'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.pnlKeys, noun: "operator")
        let given = members.filter { Self.pnlKeys.contains($0.key) }
        if given.isEmpty, suggested.isDisjoint(with: Self.pnlKeys) {
            error("'volume' needs one of 'above' or 'below'", at: node.position)
        }
        for extra in given.dropFirst() {
            error("'volume' takes only one of 'above' or 'below'", at: extra.keyPosition)
        }
        let values = given.map { member -> Double? in
            guard let value = number(member.value, "'\(member.key)'"), case .number(let text) = member.value.value
            else { return nil }
            guard value >= 0 else {
                error("'\(member.key)' must be 0 or more, found \(UserText.escaped(text))", at: member.value.position)
                return nil
            }
            return value
        }
        guard given.count == 1, let value = values[0] else { return nil }
        return .volume(given[0].key == "above" ? .above(value) : .below(value))
    }

    private mutating func priceCondition(_ node: JSONNode) -> PriceCondition? {
        guard let members = object(node, "'price'") else { return nil }
        let suggested = checkKeys(members, allowed: Self.priceOperators, noun: "operator")
        let given = members.filter { Self.priceOperators.contains($0.key) }
        guard let chosen = given.first else {
            if suggested.isEmpty {
                error(
                    "'price' needs exactly one operator: above, below, crossesAbove, crossesBelow, inside or outside",
                    at: node.position)
            }
            return nil
        }
        for extra in given.dropFirst() {
            error(
                "'price' has more than one operator ('\(chosen.key)' and '\(extra.key)'); use one rule for each",
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
            error(
                "\(name) must be an array of two numbers [low, high], found \(node.value.typeName)", at: node.position)
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
            error(
                "\(name) low bound must be less than high bound, found [\(JSONNumber.format(low)), \(JSONNumber.format(high))]",
                at: node.position)
            return nil
        }
        return (low, high)
    }

    /// `{"window": W, "above"|"below": C}` (`change`, `fromHigh`, `fromLow`), or without
    /// `window` (`pnl`, whose window is returned as 0).
    private mutating func percentCondition(
        _ node: JSONNode, _ name: String, windowed: Bool
    ) -> (Int64, ChangeCondition)? {
        guard let members = object(node, name) else { return nil }
        let suggested = checkKeys(members, allowed: windowed ? Self.changeKeys : Self.pnlKeys)
        let window: Int64? =
            windowed
            ? requireKey("window", in: node, members, suggested: suggested).flatMap { self.window($0.value) } : 0
        let given = members.filter { $0.key == "above" || $0.key == "below" }
        if given.isEmpty, suggested.isDisjoint(with: ["above", "below"]) {
            error("\(name) needs one of 'above' or 'below'", at: node.position)
        }
        for extra in given.dropFirst() {
            error("\(name) takes only one of 'above' or 'below'", at: extra.keyPosition)
        }
        let thresholds = given.map { number($0.value, "'\($0.key)'", limit: Limits.changeThreshold) }
        guard let window, given.count == 1, let threshold = thresholds[0] else { return nil }
        return (window, given[0].key == "above" ? .above(threshold) : .below(threshold))
    }

    /// A window is a whole number of minutes, at least one (Docs/rules.md, "Change windows"),
    /// at most `Limits.window`; 24h qualifies. In a version 2 file a window over 24 hours is a
    /// whole number of hours, at most `Limits.longWindow` (Docs/rules.md, "Long windows").
    mutating func window(_ node: JSONNode) -> Int64? {
        let limit = version == 1 ? Limits.window : Limits.longWindow
        guard let millis = duration(node, "'window'", limit: limit), case .string(let text) = node.value else {
            return nil
        }
        if millis < 60_000 {
            error("'window' must be at least 1 minute, found \(UserText.double(text))", at: node.position)
            return nil
        }
        if version >= 2, millis > 86_400_000 {
            guard millis % 3_600_000 == 0 else {
                error(
                    "'window' over 24h must be a whole number of hours, found \(UserText.double(text))",
                    at: node.position)
                return nil
            }
        } else if millis % 60_000 != 0 {
            error("'window' must be a whole number of minutes, found \(UserText.double(text))", at: node.position)
            return nil
        }
        return millis
    }
}
