import AlertModel

/// The `sinks` object: name → sink configuration (Docs/rules.md#sinks).
extension FileChecker {
    static let sinkKeys: [(type: String, keys: [String])] = [
        ("stdout", ["type", "format"] + policyKeys),
        ("file", ["type", "path"] + policyKeys),
        ("webhook", ["type", "url", "urlEnv", "urlFile", "method", "headers", "timeout", "preset", "template",
                     "secretEnv", "secretFile", "caFile"] + deliveryKeys + policyKeys + deliveryPolicyKeys),
        ("exec", ["type", "command", "timeout"] + deliveryKeys + policyKeys + deliveryPolicyKeys),
    ]

    /// The file's valid sinks; every name, valid or not, joins the namespace so that `notify`
    /// does not also call a broken sink unknown.
    mutating func sinks(_ node: JSONNode) -> [SinkDefinition] {
        guard let members = object(node, "'sinks'") else { return [] }
        var sinks: [SinkDefinition] = []
        for member in members {
            sinkNames.append(NamedPlace(name: member.key, position: member.keyPosition))
            if member.key.isEmpty { error("sink name must not be empty", at: member.keyPosition) }
            if let (kind, delivery, policy) = sink(member.key, member.value), !member.key.isEmpty {
                sinks.append(SinkDefinition(name: member.key, kind: kind, delivery: delivery, policy: policy))
            }
        }
        return sinks
    }

    private mutating func sink(_ name: String, _ node: JSONNode) -> (SinkKind, DeliverySettings, SinkPolicy)? {
        guard let members = object(node, "sink \(UserText.single(name))") else { return nil }
        let typeMember: JSONMember? = members["type"]
        var typeName: String?
        if case .string(let text)? = typeMember?.value.value { typeName = text }
        guard let typeName, let keys = Self.sinkKeys.first(where: { $0.type == typeName })?.keys else {
            // Without a known type the allowed keys are unknown: check against all of them,
            // so that a misspelled `type` still gets its suggestion.
            let suggested = checkKeys(members, allowed: Array(Set(Self.sinkKeys.flatMap(\.keys))).sorted())
            if let type = requireKey("type", in: node, members, suggested: suggested) {
                _ = choice(type.value, "'type'", Self.sinkKeys.map(\.type))
            }
            return nil
        }
        var kind: SinkKind?
        var delivery = DeliverySettings()
        var policy = SinkPolicy()
        let clean = isClean { checker in
            checker.checkKeys(members, allowed: keys)
            policy = checker.policy(sink: name, members.filter { keys.contains($0.key) })
            switch typeName {
            case "stdout":
                let format = members["format"].map { checker.choice($0.value, "'format'", ["text", "json"]) } ?? "text"
                kind = format.flatMap(AlertOutputFormat.init(rawValue:)).map { .stdout(format: $0) }
            case "file":
                kind = checker.requireKey("path", in: node, members, suggested: [])
                    .flatMap { checker.nonEmptyString($0.value, "'path'") }.map { .file(path: $0) }
            case "webhook":
                kind = checker.webhook(node, members).map(SinkKind.webhook)
                delivery = checker.delivery(members)
            default:
                kind = checker.exec(node, members).map(SinkKind.exec)
                delivery = checker.delivery(members)
            }
        }
        guard clean, let kind else { return nil }
        return (kind, delivery, policy)
    }

    private mutating func exec(_ node: JSONNode, _ members: [JSONMember]) -> ExecSpec? {
        var spec = ExecSpec(command: [])
        if let member = members["timeout"] { spec.timeout = positiveDuration(member.value, "'timeout'", limit: Limits.sinkTimeout) ?? spec.timeout }
        guard let command = requireKey("command", in: node, members, suggested: []) else { return nil }
        guard case .array(let elements) = command.value.value else {
            error("'command' must be an array of strings (program and arguments), found \(command.value.value.typeName)",
                  at: command.value.position)
            return nil
        }
        guard !elements.isEmpty else {
            error("exec command must not be empty", at: command.value.position)
            return nil
        }
        let argv = elements.map { nonEmptyString($0, "each argument in 'command'") }
        guard argv.allSatisfy({ $0 != nil }) else { return nil }
        spec.command = argv.compactMap { $0 }
        return spec
    }
}
