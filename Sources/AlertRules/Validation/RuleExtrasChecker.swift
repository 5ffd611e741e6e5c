import AlertModel

/// A version 2 rule's own keys `for`, `expires`, `resolve`, `priority`, and the keys a kind
/// of condition does not take (Docs/rules.md#version-2).
extension FileChecker {
    /// The kind of condition a rule's `when` is written with, valid or not.
    enum WrittenCondition: Equatable {
        case move(percent: Bool)
        case listed
        case other
    }

    static func writtenCondition(_ when: JSONNode?) -> WrittenCondition {
        guard case .object(let members)? = when?.value else { return .other }
        let keys = members.filter { conditionKeys.contains($0.key) }
        guard keys.count == 1 else { return .other }
        switch keys[0].key {
        case "move":
            guard case .object(let body) = keys[0].value.value else { return .move(percent: false) }
            return .move(percent: body["percent"] != nil)
        case "listed":
            return .listed
        default:
            return .other
        }
    }

    /// `defaults` without the keys a rule of this kind may not carry: a file-wide `repeat`
    /// does not make a `move` rule invalid, nor a file-wide `hysteresis` a percent move.
    static func applicable(_ defaults: RuleDefaults, to written: WrittenCondition) -> RuleDefaults {
        var applicable = defaults
        switch written {
        case .move(let percent):
            applicable.repeatSetting = nil
            if percent { applicable.hysteresis = nil }
        case .listed:
            applicable.hysteresis = nil
            if case .every? = applicable.repeatSetting { applicable.repeatSetting = nil }
        case .other:
            break
        }
        return applicable
    }

    /// The rule's version 2 settings, nil when it has none; reports the keys that do not fit
    /// its condition.
    mutating func extras(
        _ members: [JSONMember], condition: Condition?, written: WrittenCondition,
        settings: RuleDefaults
    ) -> RuleExtras? {
        var extras = RuleExtras()
        if case .every(let every)? = settings.repeatSetting { extras.remindEvery = every }
        let kind: String? =
            switch written {
            case .move: "'move' rules"
            case .listed: "'listed' rules"
            case .other: nil
            }
        if let member = members["repeat"], let kind {
            if case .move = written {
                error("'repeat' is not allowed on \(kind): a move re-arms at each alert", at: member.value.position)
            } else if case .every? = settings.repeatSetting {
                error(#"'repeat' {"every": …} is not allowed on \#(kind)"#, at: member.value.position)
            }
        }
        if let member = members["hysteresis"] {
            if written == .move(percent: true) {
                error(
                    "'hysteresis' is not allowed on 'percent' moves (a 'step' move takes one)",
                    at: member.value.position)
            } else if written == .listed {
                error("'hysteresis' is not allowed on 'listed' rules", at: member.value.position)
            }
        }
        if let member = members["for"], allowsVersion2(member),
            let sustain = positiveDuration(member.value, "'for'", limit: Limits.sustain)
        {
            if let kind {
                error("'for' is not allowed on \(kind)", at: member.value.position)
            } else if let crossing = condition.flatMap({ Self.crossing(in: $0) }) {
                error(
                    "'for' is not allowed with a crossing ('\(crossing)'): a crossing holds for one tick only",
                    at: member.value.position)
            } else {
                extras.sustain = sustain
            }
        }
        if let member = members["resolve"], allowsVersion2(member), let resolve = bool(member.value, "'resolve'") {
            if resolve, let kind {
                error(
                    "'resolve' is not allowed on \(kind): they never re-arm, so nothing resolves",
                    at: member.value.position)
            } else if resolve, settings.repeatSetting == .mode(.once) {
                let source = members["repeat"] == nil ? #" (from 'defaults'; set "repeat": "rearm" on this rule)"# : ""
                error(
                    #"'resolve' needs a rule that re-arms, but 'repeat' is "once"\#(source)"#, at: member.value.position
                )
            }
            extras.resolve = resolve
        }
        if let member = members["expires"], allowsVersion2(member), let text = string(member.value, "'expires'") {
            if let instant = Timestamp.parse(text.utf8) {
                extras.expires = instant
            } else {
                error(
                    #"'expires' must be an RFC 3339 time with a zone, like "2026-12-31T00:00:00Z", found \#(UserText.double(text))"#,
                    at: member.value.position)
            }
        }
        if let member = members["priority"], allowsVersion2(member),
            let priority = choice(member.value, "'priority'", ["high", "normal"])
        {
            extras.highPriority = priority == "high"
        }
        return extras == RuleExtras() ? nil : extras
    }

    /// The first crossing operator in `condition`, looking inside `all`/`any`.
    static func crossing(in condition: Condition) -> String? {
        switch condition {
        case .price(.crossesAbove): return "crossesAbove"
        case .price(.crossesBelow): return "crossesBelow"
        case .all(let members), .any(let members): return members.lazy.compactMap { crossing(in: $0) }.first
        default: return nil
        }
    }
}
