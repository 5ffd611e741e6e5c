import AlertModel

/// A `webhook` sink: where to post (exactly one of `url`, `urlEnv`, `urlFile`) and how.
extension FileChecker {
    static let webhookMethods = ["POST", "PUT", "PATCH", "GET"]
    static let webhookPresets = ["json", "slack", "discord", "ntfy", "telegram", "alertmanager", "alertmanager-webhook"]

    mutating func webhook(_ node: JSONNode, _ members: [JSONMember]) -> WebhookSpec? {
        let url = oneSource(of: ["url", "urlEnv", "urlFile"], node, members, required: true)
        let secret = oneSource(of: ["secretEnv", "secretFile"], node, members, required: false)
        guard let url else { return nil }
        var spec = WebhookSpec(url: url, secret: secret)
        if let member = members["method"] {
            spec.method = choice(member.value, "'method'", Self.webhookMethods) ?? spec.method
        }
        if let member = members["headers"] { spec.headers = headers(member.value) }
        if let member = members["timeout"] {
            spec.timeout = positiveDuration(member.value, "'timeout'", limit: Limits.sinkTimeout) ?? spec.timeout
        }
        if let member = members["preset"] {
            spec.preset = choice(member.value, "'preset'", Self.webhookPresets) ?? spec.preset
        }
        if let member = members["template"] { spec.template = string(member.value, "'template'") }
        if let member = members["caFile"] { spec.caFile = nonEmptyString(member.value, "'caFile'") }
        return spec
    }

    /// At most one (exactly one if `required`) of the keys, each naming an inline value
    /// (`url`), an environment variable (`…Env`) or a file (`…File`).
    private mutating func oneSource(
        of keys: [String], _ node: JSONNode, _ members: [JSONMember],
        required: Bool
    ) -> SecretSource? {
        let given = members.filter { keys.contains($0.key) }
        let listed = keys.map { "'\($0)'" }
        let choices =
            listed.count == 2
            ? "\(listed[0]) or \(listed[1])" : listed.dropLast().joined(separator: ", ") + " or " + listed.last!
        if given.isEmpty, required { error("webhook needs one of \(choices)", at: node.position) }
        for extra in given.dropFirst() { error("webhook takes only one of \(choices)", at: extra.keyPosition) }
        guard let member = given.first, let text = nonEmptyString(member.value, "'\(member.key)'") else { return nil }
        if member.key.hasSuffix("Env") { return .environment(text) }
        if member.key.hasSuffix("File") { return .file(text) }
        let lower = text.lowercased()
        let scheme = ["http://", "https://"].first { lower.hasPrefix($0) }
        guard let scheme, lower.count > scheme.count else {
            error("webhook url must be http or https", at: member.value.position)
            return nil
        }
        return .inline(text)
    }

    private mutating func headers(_ node: JSONNode) -> [String: String] {
        guard case .object(let members) = node.value else {
            error("'headers' must be an object of strings, found \(node.value.typeName)", at: node.position)
            return [:]
        }
        var headers: [String: String] = [:]
        for member in members {
            if let value = string(member.value, "header \(UserText.single(member.key))") { headers[member.key] = value }
        }
        return headers
    }
}
