import AlertModel

/// One rule object (Docs/rules.md#rules, #version-2).
extension FileChecker {
    static let ruleKeys = [
        "id", "symbol", "symbols", "match", "portfolio", "series", "when", "notify", "repeat", "cooldown",
        "hysteresis", "message", "enabled", "for", "expires", "resolve", "priority"
    ]

    /// `MessageTemplate.placeholders` in the order Docs/rules.md#messages lists them, for messages.
    static let placeholdersInSpecOrder = [
        "rule", "symbol", "price", "value", "threshold", "condition", "time",
        "kind", "reminder"
    ]

    /// The rule, or nil when it has errors (they are reported).
    mutating func rule(_ node: JSONNode, defaults: RuleDefaults) -> Rule? {
        guard let members = object(node, "each rule") else { return nil }
        var built: Rule?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.ruleKeys)
            let id = checker.requireKey("id", in: node, members, suggested: suggested).flatMap {
                checker.ruleID($0.value)
            }
            let scope = checker.scope(of: node, members, suggested: suggested)
            if case .series(let name)? = scope, let member = members["series"] {
                checker.seriesReferences.append(
                    SeriesReference(
                        name: name, position: member.value.position,
                        otherLeaves: Self.leavesOtherThanPrice(members["when"]?.value),
                        hysteresis: members["hysteresis"]?.value.position))
            }
            let place = ConditionPlace(scope: Self.scopeKind(members))
            let condition = checker.requireKey("when", in: node, members, suggested: suggested)
                .flatMap { checker.condition($0.value, place) }
            // What kind of condition the file writes, read from the file so that a rule whose
            // condition has another error still gets every error of its other keys.
            let written = Self.writtenCondition(members["when"]?.value)
            var settings = checker.settings(members, defaults: Self.applicable(defaults, to: written))
            // Read the operator from the file, so a range with another error (L ≥ H) still
            // gets its hysteresis reported in the same run.
            if let range = condition.flatMap(Self.rangeName)
                ?? members["when"].flatMap({ Self.rangeOperator($0.value) })
            {
                // A file's default hysteresis is meant for the rules it fits; ranges ignore it.
                checker.rejectHysteresis(members["hysteresis"], range: range)
                settings.hysteresis = 0
            }
            let extras = checker.extras(members, condition: condition, written: written, settings: settings)
            let message = members["message"].flatMap { checker.message($0.value) }
            let enabled = members["enabled"].flatMap { checker.bool($0.value, "'enabled'") } ?? true
            if let id, let scope, let condition {
                built = checker.makeRule(
                    id: id, scope: scope, condition: condition, settings: settings, message: message,
                    enabled: enabled, extras: extras)
                if let expires = extras?.expires, let member = members["expires"] {
                    checker.expirations.append(Expiration(rule: id, millis: expires, position: member.value.position))
                }
            }
        }
        return clean ? built : nil
    }

    /// The rule its checked parts make, the built-in defaults filling what neither the rule
    /// nor its file's `defaults` set.
    func makeRule(
        id: String, scope: Scope, condition: Condition, settings: RuleDefaults, message: String?,
        enabled: Bool, extras: RuleExtras?
    ) -> Rule {
        Rule(
            id: id, scope: scope, condition: condition, notify: settings.notify ?? ["stdout"],
            repeatMode: settings.repeatSetting?.mode ?? .rearm, cooldown: settings.cooldown ?? 0,
            hysteresis: settings.hysteresis ?? 0, message: message, enabled: enabled, fileVersion: version,
            extras: extras)
    }

    /// `[A-Za-z0-9._-]{1,64}`: rule ids and portfolio names.
    static func isName(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            (1...64).contains(bytes.count)
                && bytes.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                        true
                    default: false
                    }
                }
        }
    }

    /// `[A-Za-z0-9._-]{1,64}`; a valid id joins the namespace shared with sink names.
    mutating func ruleID(_ node: JSONNode) -> String? {
        guard let id = string(node, "'id'") else { return nil }
        guard Self.isName(id) else {
            error(
                "'id' must be 1 to 64 letters, digits, '.', '_' or '-', found \(UserText.double(id))", at: node.position
            )
            return nil
        }
        ruleIDs.append(NamedPlace(name: id, position: node.position))
        return id
    }

    /// The keys of the condition leaves in `when` other than `price`, looking inside `all`/`any`:
    /// what a rule on a `spread` series may not use.
    static func leavesOtherThanPrice(_ when: JSONNode?) -> [NamedPlace] {
        guard case .object(let members)? = when?.value else { return [] }
        return members.flatMap { member -> [NamedPlace] in
            switch member.key {
            case "price": return []
            case "all", "any":
                guard case .array(let elements) = member.value.value else { return [] }
                return elements.flatMap { leavesOtherThanPrice($0) }
            case let key where conditionKeys.contains(key):
                return [NamedPlace(name: key, position: member.keyPosition)]
            default: return []
            }
        }
    }

    /// Hysteresis has no meaning for a range: leaving it is its re-arm condition (Docs/rules.md).
    private mutating func rejectHysteresis(_ member: JSONMember?, range: String) {
        guard let member else { return }
        error("'hysteresis' is not allowed on '\(range)' conditions", at: member.value.position)
    }

    private static func rangeName(_ condition: Condition) -> String? {
        switch condition {
        case .price(.inside): return "inside"
        case .price(.outside): return "outside"
        default: return nil
        }
    }

    /// `inside`/`outside` when `when` is written `{"price": {"inside"|"outside": …}}`, valid or not.
    private static func rangeOperator(_ when: JSONNode) -> String? {
        guard case .object(let conditions) = when.value,
            let price = conditions.first(where: { $0.key == "price" }),
            case .object(let operators) = price.value.value
        else { return nil }
        return operators.lazy.map(\.key).first { $0 == "inside" || $0 == "outside" }
    }

    mutating func message(_ node: JSONNode) -> String? {
        guard let text = string(node, "'message'") else { return nil }
        let unknown = MessageTemplate.unknownPlaceholders(in: text)
        for (name, offset) in unknown {
            let hint =
                Suggestion.closest(to: name, among: Self.placeholdersInSpecOrder).map { " (did you mean '{{\($0)}}'?)" }
                ?? " (known: " + Self.placeholdersInSpecOrder.map { "{{\($0)}}" }.joined(separator: " ") + ")"
            error(
                "unknown placeholder '{{\(UserText.escaped(name, quote: "'"))}}' in 'message'\(hint)",
                at: node.position(ofScalar: offset))
        }
        return unknown.isEmpty ? text : nil
    }
}
