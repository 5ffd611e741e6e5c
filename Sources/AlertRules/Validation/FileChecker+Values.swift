import AlertModel

/// Typed reads. `name` is how the message names the value, e.g. `'cooldown'`; each read
/// returns nil after reporting when the value does not fit.
extension FileChecker {
    mutating func object(_ node: JSONNode, _ name: String) -> [JSONMember]? {
        if case .object(let members) = node.value { return members }
        error("\(name) must be an object, found \(node.value.typeName)", at: node.position)
        return nil
    }

    mutating func array(_ node: JSONNode, _ name: String) -> [JSONNode]? {
        if case .array(let elements) = node.value { return elements }
        error("\(name) must be an array, found \(node.value.typeName)", at: node.position)
        return nil
    }

    mutating func string(_ node: JSONNode, _ name: String) -> String? {
        if case .string(let text) = node.value { return text }
        error("\(name) must be a string, found \(node.value.typeName)", at: node.position)
        return nil
    }

    mutating func nonEmptyString(_ node: JSONNode, _ name: String) -> String? {
        guard let text = string(node, name) else { return nil }
        if text.isEmpty {
            error("\(name) must not be empty", at: node.position)
            return nil
        }
        return text
    }

    mutating func bool(_ node: JSONNode, _ name: String) -> Bool? {
        if case .bool(let value) = node.value { return value }
        error("\(name) must be true or false, found \(node.value.typeName)", at: node.position)
        return nil
    }

    /// A number that is finite as a Double (`1e999` is valid JSON but not a usable threshold).
    mutating func number(_ node: JSONNode, _ name: String) -> Double? {
        guard case .number(let text) = node.value else {
            error("\(name) must be a number, found \(node.value.typeName)", at: node.position)
            return nil
        }
        guard let value = Double(text), value.isFinite else {
            error("\(name) must be a finite number, found \(UserText.escaped(text))", at: node.position)
            return nil
        }
        return value
    }

    /// A number from `-limit` to `limit`.
    mutating func number(_ node: JSONNode, _ name: String, limit: Limits.NumberLimit) -> Double? {
        guard let value = number(node, name), case .number(let text) = node.value else { return nil }
        guard abs(value) <= limit.value else {
            error(
                "\(name) must be from -\(limit.text) to \(limit.text), found \(UserText.escaped(text))",
                at: node.position)
            return nil
        }
        return value
    }

    /// A whole number in `range`.
    mutating func wholeNumber(_ node: JSONNode, _ name: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = number(node, name) else { return nil }
        guard value == value.rounded(), value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
            error("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)", at: node.position)
            return nil
        }
        return Int(value)
    }

    /// A number greater than 0 and at most `limit`.
    mutating func positive(_ node: JSONNode, _ name: String, limit: Limits.NumberLimit) -> Double? {
        guard let value = number(node, name), case .number(let text) = node.value else { return nil }
        guard value > 0 else {
            error("\(name) must be more than 0, found \(UserText.escaped(text))", at: node.position)
            return nil
        }
        guard value <= limit.value else {
            error("\(name) must be at most \(limit.text), found \(UserText.escaped(text))", at: node.position)
            return nil
        }
        return value
    }

    /// A duration string (Docs/rules.md) in milliseconds, at most `limit`.
    mutating func duration(_ node: JSONNode, _ name: String, limit: Limits.DurationLimit) -> Int64? {
        guard case .string(let text) = node.value else {
            error("\(name) must be a duration string like \"10m\", found \(node.value.typeName)", at: node.position)
            return nil
        }
        switch DurationText.read(text) {
        case .millis(let millis) where millis <= limit.millis:
            return millis
        case .millis, .tooLong:
            error("\(name) must be at most \(limit.text), found \(UserText.double(text))", at: node.position)
        case .invalid:
            error(
                "\(name) is not a valid duration: \(UserText.double(text)) (use e.g. \"90s\", \"10m\", \"1h30m\", \"1d\")",
                at: node.position)
        }
        return nil
    }

    /// A string that must be one of `choices` (compared exactly).
    mutating func choice(_ node: JSONNode, _ name: String, _ choices: [String]) -> String? {
        let listed = choices.map { "\"\($0)\"" }
        let expected = listed.count == 2 ? "\(listed[0]) or \(listed[1])" : "one of " + listed.joined(separator: ", ")
        guard case .string(let text) = node.value else {
            error("\(name) must be \(expected), found \(node.value.typeName)", at: node.position)
            return nil
        }
        guard choices.contains(text) else {
            error(
                "\(name) must be \(expected), found \(UserText.double(text))"
                    + Suggestion.hint(for: text, among: choices), at: node.position)
            return nil
        }
        return text
    }
}
