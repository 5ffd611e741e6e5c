import AlertModel
import AlertPolicy

/// A sink's policy keys (Docs/sinks.md#notification-policy): `quiet`, `quietAction` and `group`
/// on every sink; `rate` and `fallback` where deliveries can wait and fail (webhook, exec).
/// `fallback` names are checked once every file's sinks are known (`CrossFileCheck`).
extension FileChecker {
    static let policyKeys = ["quiet", "quietAction", "group"]
    static let deliveryPolicyKeys = ["rate", "fallback"]
    static let quietKeys = ["days", "from", "to", "tz"]
    static let groupKeys = ["window", "by", "max"]
    static let rateKeys = ["count", "per"]
    /// A digest window over this keeps events from a person for longer than any alert matters.
    static let groupWindowLimit = Limits.DurationLimit("1d")
    static let ratePerLimit = Limits.DurationLimit("1d")

    /// `members` holds only the policy keys the sink's type allows; in a version 1 file each is
    /// an error naming the version (the policy is a version 2 feature) and the policy stays empty.
    mutating func policy(sink name: String, _ members: [JSONMember]) -> SinkPolicy {
        var policy = SinkPolicy()
        var allowed = true
        for member in members where Self.policyKeys.contains(member.key) || Self.deliveryPolicyKeys.contains(member.key)
        {
            allowed = allowsVersion2(member) && allowed
        }
        guard allowed else { return policy }
        if let member = members["quiet"], let windows = array(member.value, "'quiet'") {
            for window in windows {
                if let spec = quietWindow(window) { policy.quiet.append(spec) }
            }
        }
        if let member = members["quietAction"] {
            policy.quietAction =
                choice(member.value, "'quietAction'", QuietAction.allCases.map(\.rawValue))
                .flatMap(QuietAction.init(rawValue:)) ?? .hold
        }
        if let member = members["group"] { policy.group = group(member.value) }
        if let member = members["rate"] { policy.rate = rate(member.value) }
        if let member = members["fallback"], let target = nonEmptyString(member.value, "'fallback'") {
            policy.fallback = target
            fallbackReferences.append((sink: name, target: NamedPlace(name: target, position: member.value.position)))
        }
        return policy
    }

    private mutating func quietWindow(_ node: JSONNode) -> QuietWindowSpec? {
        guard let members = object(node, "each window in 'quiet'") else { return nil }
        var window: QuietWindowSpec?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.quietKeys)
            let from = checker.requireKey("from", in: node, members, suggested: suggested).flatMap {
                checker.clockTime($0.value, "'from'")
            }
            let to = checker.requireKey("to", in: node, members, suggested: suggested).flatMap {
                checker.clockTime($0.value, "'to'")
            }
            var spec = QuietWindowSpec(from: from ?? 0, to: to ?? 0)
            if let days = members["days"] { spec.days = checker.days(days.value) }
            if let zone = members["tz"], let name = checker.string(zone.value, "'tz'") {
                if QuietHours.zone(named: name) == nil {
                    checker.error(
                        "unknown time zone \(UserText.double(name)) in 'tz' (use an IANA name such as \"Europe/Berlin\" or \"UTC\")",
                        at: zone.value.position)
                }
                spec.zone = name
            }
            window = spec
        }
        return clean ? window : nil
    }

    private mutating func days(_ node: JSONNode) -> Set<Weekday> {
        guard let elements = array(node, "'days'") else { return [] }
        if elements.isEmpty { error("'days' must name at least one day", at: node.position) }
        var days: Set<Weekday> = []
        let names = Weekday.allCases.sorted { ($0.rawValue + 6) % 7 < ($1.rawValue + 6) % 7 }.map(\.name)
        for element in elements {
            guard let text = string(element, "each day in 'days'") else { continue }
            guard let day = Weekday(name: text) else {
                error(
                    "unknown day \(UserText.double(text)) in 'days' (use \(names.joined(separator: ", ")))"
                        + Suggestion.hint(for: text, among: names), at: element.position)
                continue
            }
            days.insert(day)
        }
        return days
    }

    /// `HH:MM`, 00:00 to 23:59, as minutes after midnight.
    private mutating func clockTime(_ node: JSONNode, _ name: String) -> Int? {
        guard let text = string(node, name) else { return nil }
        let bytes = Array(text.utf8)
        let digits = [0, 1, 3, 4].map { bytes.count == 5 ? Int(bytes[$0]) - 0x30 : -1 }
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"), digits.allSatisfy({ (0...9).contains($0) }),
            digits[0] * 10 + digits[1] < 24, digits[2] * 10 + digits[3] < 60
        else {
            error(
                "\(name) must be a time of day \"HH:MM\" from \"00:00\" to \"23:59\", found \(UserText.double(text))",
                at: node.position)
            return nil
        }
        return (digits[0] * 10 + digits[1]) * 60 + digits[2] * 10 + digits[3]
    }

    private mutating func group(_ node: JSONNode) -> GroupSpec? {
        guard let members = object(node, "'group'") else { return nil }
        var spec: GroupSpec?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.groupKeys)
            let window = checker.requireKey("window", in: node, members, suggested: suggested)
                .flatMap { checker.positiveDuration($0.value, "'window'", limit: Self.groupWindowLimit) }
            var group = GroupSpec(window: window ?? 1)
            if let by = members["by"], let fields = checker.array(by.value, "'by'") {
                let names = GroupField.allCases.map(\.rawValue)
                group.by = fields.compactMap { field in
                    checker.choice(field, "each field in 'by'", names).flatMap(GroupField.init(rawValue:))
                }
            }
            if let max = members["max"] {
                group.max = checker.wholeNumber(max.value, "'max'", in: GroupSpec.maxRange) ?? group.max
            }
            spec = group
        }
        return clean ? spec : nil
    }

    private mutating func rate(_ node: JSONNode) -> RateSpec? {
        guard let members = object(node, "'rate'") else { return nil }
        var spec: RateSpec?
        let clean = isClean { checker in
            let suggested = checker.checkKeys(members, allowed: Self.rateKeys)
            let count = checker.requireKey("count", in: node, members, suggested: suggested)
                .flatMap { checker.wholeNumber($0.value, "'count'", in: 1...1_000_000) }
            let per = checker.requireKey("per", in: node, members, suggested: suggested)
                .flatMap { checker.positiveDuration($0.value, "'per'", limit: Self.ratePerLimit) }
            if let count, let per { spec = RateSpec(count: count, per: per) }
        }
        return clean ? spec : nil
    }
}
