import AlertModel

/// What a sink kind's check sees of one sink object in a rule file: its keys and their values,
/// read typed, with every problem reported at its place (`file:line:col`) in the same words as
/// the rest of the file's errors (Docs/rules.md#errors). Every kind checks its own keys with it
/// (`SinkTypeCheck.init(_:keys:read:)`, in its folder in AlertSinks); `type` and the keys every
/// sink shares (the policy's, and the outbox's for a durable kind) are checked for it, and
/// unknown keys are reported with a "did you mean".
///
/// Each read returns nil when the key is absent (reporting `missing required key 'KEY'` at the
/// sink's `{` if it is `required`), or after reporting when the value does not fit. Messages
/// name the value by its key in single quotes: `'label' must be a string, found number`.
public struct SinkSettingsChecker {
    var checker: FileChecker
    let node: JSONNode
    let members: [JSONMember]

    init(checker: FileChecker, node: JSONNode, members: [JSONMember]) {
        self.checker = checker
        self.node = node
        self.members = members
    }

    /// The keys written in the sink's object, in order.
    public var keys: [String] { members.map(\.key) }

    /// Whether the sink's object has `key`.
    public func has(_ key: String) -> Bool { members[key] != nil }

    /// A string (`nonEmpty`: not ""), or nil.
    public mutating func string(_ key: String, required: Bool = false, nonEmpty: Bool = true) -> String? {
        guard let member = member(key, required: required) else { return nil }
        return nonEmpty
            ? checker.nonEmptyString(member.value, "'\(key)'") : checker.string(member.value, "'\(key)'")
    }

    /// An array of non-empty strings, itself not empty (e.g. a program and its arguments). The
    /// messages name the array `'KEY' must be an array of <contents>`, the empty array
    /// `emptyMessage` (default `'KEY' must not be empty`) and each element `each` (default
    /// `each element of 'KEY'`).
    public mutating func strings(
        _ key: String, required: Bool = false, contents: String = "strings", emptyMessage: String? = nil,
        each: String? = nil
    ) -> [String]? {
        guard let member = member(key, required: required) else { return nil }
        guard case .array(let elements) = member.value.value else {
            checker.error(
                "'\(key)' must be an array of \(contents), found \(member.value.value.typeName)",
                at: member.value.position)
            return nil
        }
        guard !elements.isEmpty else {
            checker.error(emptyMessage ?? "'\(key)' must not be empty", at: member.value.position)
            return nil
        }
        let texts = elements.map { checker.nonEmptyString($0, each ?? "each element of '\(key)'") }
        return texts.allSatisfy { $0 != nil } ? texts.compactMap { $0 } : nil
    }

    /// An object of strings (e.g. headers), each named in messages as `entry 'NAME'`.
    public mutating func stringsByName(_ key: String, entry: String, required: Bool = false) -> [String: String]? {
        guard let member = member(key, required: required) else { return nil }
        guard case .object(let entries) = member.value.value else {
            checker.error(
                "'\(key)' must be an object of strings, found \(member.value.value.typeName)", at: member.value.position
            )
            return nil
        }
        var strings: [String: String] = [:]
        for entryMember in entries {
            if let text = checker.string(entryMember.value, "\(entry) \(UserText.single(entryMember.key))") {
                strings[entryMember.key] = text
            }
        }
        return strings
    }

    /// Which of `keys`, that exclude each other, is given, with its non-empty string: at most
    /// one, and with `required` exactly one (`NOUN needs one of 'a', 'b' or 'c'` at the sink's
    /// `{`; `NOUN takes only one of ...` at each further one).
    public mutating func oneOf(_ keys: [String], noun: String, required: Bool) -> (key: String, text: String)? {
        let given = members.filter { keys.contains($0.key) }
        let listed = keys.map { "'\($0)'" }
        let choices =
            listed.count == 2
            ? "\(listed[0]) or \(listed[1])" : listed.dropLast().joined(separator: ", ") + " or " + listed.last!
        if given.isEmpty, required { checker.error("\(noun) needs one of \(choices)", at: node.position) }
        for extra in given.dropFirst() { checker.error("\(noun) takes only one of \(choices)", at: extra.keyPosition) }
        guard let member = given.first, let text = checker.nonEmptyString(member.value, "'\(member.key)'") else {
            return nil
        }
        return (member.key, text)
    }

    /// A string that is one of `choices` (compared exactly), with a "did you mean" when close.
    public mutating func choice(_ key: String, among choices: [String], required: Bool = false) -> String? {
        guard let member = member(key, required: required) else { return nil }
        return checker.choice(member.value, "'\(key)'", choices)
    }

    /// `true` or `false`.
    public mutating func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let member = member(key, required: required) else { return nil }
        return checker.bool(member.value, "'\(key)'")
    }

    /// A whole number in `range`.
    public mutating func wholeNumber(_ key: String, in range: ClosedRange<Int>, required: Bool = false) -> Int? {
        guard let member = member(key, required: required) else { return nil }
        return checker.wholeNumber(member.value, "'\(key)'", in: range)
    }

    /// A duration string (`"90s"`, `"10m"`, ...) longer than zero and at most `atMost` (written
    /// the same way, e.g. `"1h"`), in milliseconds.
    public mutating func duration(_ key: String, atMost: String, required: Bool = false) -> Int64? {
        guard let member = member(key, required: required) else { return nil }
        return checker.positiveDuration(member.value, "'\(key)'", limit: Limits.DurationLimit(atMost))
    }

    /// Reports `message` at the value of `key` (at the sink's `{` when it has no such key), for
    /// what the typed reads do not check (values that exclude each other, a format of its own).
    public mutating func error(_ message: String, at key: String) {
        checker.error(message, at: members[key]?.value.position ?? node.position)
    }

    /// Reports `message` at the sink's `{`.
    public mutating func error(_ message: String) {
        checker.error(message, at: node.position)
    }

    private mutating func member(_ key: String, required: Bool) -> JSONMember? {
        required ? checker.requireKey(key, in: node, members, suggested: []) : members[key]
    }
}
