import AlertModel

/// Rules of the common shape (`PlainRule`) checked without a syntax tree, by the checks
/// `rule(_:defaults:)` makes. Only a rule with no error is taken this way: any other is read
/// and checked in full, so its diagnostics are exactly those of that path.
extension FileChecker {
    /// Reads the rule at `offset` of `bytes` if it is of the plain shape and valid, adds it to
    /// `streamed` and returns the offset just past it; otherwise returns nil having recorded
    /// nothing, for the rule to be read in full.
    mutating func plainRule(in bytes: [UInt8], at offset: Int, before: [JSONMember]) -> Int? {
        var plain = PlainRule()
        let end = bytes.withUnsafeBufferPointer { buffer -> Int? in
            var scanner = PlainRuleScanner(bytes: buffer, index: offset)
            return scanner.rule(&plain) ? scanner.index : nil
        }
        guard let end else { return nil }
        startStreaming(before: before)
        let start = marks
        guard let rule = check(plain, defaults: streamed!.defaults) else {
            forget(from: start, to: marks)
            return nil
        }
        streamed!.add(rule, at: SourceOffset(byte: offset), marks: marks)
        return end
    }

    /// The rule, or nil when a check failed (having reported an error or not).
    private mutating func check(_ plain: PlainRule, defaults: RuleDefaults) -> Rule? {
        let before = problems.count
        let id = plain.id.flatMap { ruleID($0) }
        let scope = plain.symbol.flatMap { scopeValue($0) }
        let condition = plainCondition(plain)
        var settings = self.settings(
            notify: plain.notify, cooldown: plain.cooldown, repeat: plain.repeatMode,
            hysteresis: plain.hysteresis, defaults: defaults)
        if plain.high != nil {
            // A range takes no `hysteresis` (that error is left to the full check), and ignores
            // its file's default one.
            guard plain.hysteresis == nil else { return nil }
            settings.hysteresis = 0
        }
        // With no version 2 key, a rule's extras are its reminders (`extras` with no members).
        var extras: RuleExtras?
        if case .every(let every)? = settings.repeatSetting { extras = RuleExtras(remindEvery: every) }
        let message = plain.message.flatMap { self.message($0) }
        let enabled = plain.enabled.flatMap { bool($0, "'enabled'") } ?? true
        guard problems.count == before, let id, let scope, let condition else { return nil }
        return makeRule(
            id: id, scope: scope, condition: condition, settings: settings, message: message,
            enabled: enabled, extras: extras)
    }

    /// The condition, when its numbers are within the limits `threshold` and `percentCondition`
    /// check (and a range's low bound is below its high bound); nil otherwise, with nothing
    /// reported: the full check reports it.
    private mutating func plainCondition(_ plain: PlainRule) -> Condition? {
        if let side = plain.side {
            guard let window = plain.window.flatMap({ self.window($0) }),
                let c = plain.threshold.within(Limits.changeThreshold)
            else { return nil }
            return .change(window: window, side == .above ? .above(c) : .below(c))
        }
        guard let x = plain.threshold.within(Limits.priceThreshold) else { return nil }
        switch plain.price {
        case .above: return .price(.above(x))
        case .below: return .price(.below(x))
        case .crossesAbove: return .price(.crossesAbove(x))
        case .crossesBelow: return .price(.crossesBelow(x))
        case .inside, .outside:
            guard let high = plain.high?.within(Limits.priceThreshold), x < high else { return nil }
            return .price(plain.price == .inside ? .inside(x, high) : .outside(x, high))
        default: return nil
        }
    }
}

extension PlainNumber {
    /// The value when it is from `-limit` to `limit` (`FileChecker.number(_:_:limit:)`).
    func within(_ limit: Limits.NumberLimit) -> Double? {
        guard let value, abs(value) <= limit.value else { return nil }
        return value
    }
}
