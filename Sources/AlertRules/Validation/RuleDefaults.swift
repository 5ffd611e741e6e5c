import AlertModel

/// `notify`, `cooldown`, `repeat`, `hysteresis`: a rule's own keys, else its file's `defaults`
/// (Docs/rules.md#file-structure, #rules). Nil means "not given": the built-in default applies.
struct RuleDefaults {
    static let keys = ["notify", "cooldown", "repeat", "hysteresis"]

    var notify: [String]?
    var cooldown: Int64?
    var repeatSetting: RepeatSetting?
    var hysteresis: Double?
}

/// `repeat`: `"rearm"`, `"once"`, or in version 2 `{"every": D}` (rearm, with reminders every D ms).
enum RepeatSetting: Equatable {
    case mode(RepeatMode)
    case every(Int64)

    /// The model's `repeatMode`: reminders re-arm like `rearm`.
    var mode: RepeatMode {
        if case .mode(let mode) = self { return mode }
        return .rearm
    }
}

extension FileChecker {
    /// The file's `defaults` object.
    mutating func defaults(_ node: JSONNode) -> RuleDefaults {
        guard let members = object(node, "'defaults'") else { return RuleDefaults() }
        checkKeys(members, allowed: RuleDefaults.keys)
        return settings(members, defaults: RuleDefaults())
    }

    /// The four settings from `members`, falling back to `defaults` key by key.
    mutating func settings(_ members: [JSONMember], defaults: RuleDefaults) -> RuleDefaults {
        settings(
            notify: members["notify"], cooldown: members["cooldown"], repeat: members["repeat"],
            hysteresis: members["hysteresis"], defaults: defaults)
    }

    /// The four settings from the members written for them, falling back to `defaults` key by key.
    mutating func settings(
        notify: JSONMember?, cooldown: JSONMember?, repeat: JSONMember?, hysteresis: JSONMember?,
        defaults: RuleDefaults
    ) -> RuleDefaults {
        var result = defaults
        if let member = notify { result.notify = self.notify(member.value) }
        if let member = cooldown { result.cooldown = duration(member.value, "'cooldown'", limit: Limits.cooldown) }
        if let member = `repeat` { result.repeatSetting = repeatSetting(member) }
        if let member = hysteresis, let value = number(member.value, "'hysteresis'") {
            if value < 0 {
                error("'hysteresis' must be 0 or more, found \(JSONNumber.format(value))", at: member.value.position)
            } else if value > Limits.hysteresis.value {
                error(
                    "'hysteresis' must be at most \(Limits.hysteresis.text), found \(JSONNumber.format(value))",
                    at: member.value.position)
            } else {
                result.hysteresis = value
            }
        }
        return result
    }

    private mutating func repeatSetting(_ member: JSONMember) -> RepeatSetting? {
        let node = member.value
        if case .object(let members) = node.value {
            guard allowsVersion2(member, name: #"'repeat' {"every": …}"#) else { return nil }
            let suggested = checkKeys(members, allowed: ["every"])
            return requireKey("every", in: node, members, suggested: suggested)
                .flatMap { positiveDuration($0.value, "'every'", limit: Limits.sustain) }
                .map(RepeatSetting.every)
        }
        var isString = false
        if case .string = node.value { isString = true }
        guard isString || version == 1 else {
            error(
                #"'repeat' must be "rearm", "once" or an object {"every": D}, found \#(node.value.typeName)"#,
                at: node.position)
            return nil
        }
        return choice(node, "'repeat'", ["rearm", "once"]).flatMap(RepeatMode.init(rawValue:)).map(RepeatSetting.mode)
    }

    /// Sink names in order, duplicates dropped (sending one alert twice to a sink is never
    /// wanted). Whether each sink exists is checked once all files are read.
    private mutating func notify(_ node: JSONNode) -> [String]? {
        guard case .array(let elements) = node.value else {
            error("'notify' must be an array of sink names, found \(node.value.typeName)", at: node.position)
            return nil
        }
        var names: [String] = []
        for element in elements {
            guard let name = string(element, "each sink name in 'notify'") else { continue }
            sinkReferences.append(NamedPlace(name: name, position: element.position))
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}
