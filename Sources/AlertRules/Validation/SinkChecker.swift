import AlertModel

/// How a rule file's sink of one `type` is checked: the keys it takes and how its own keys are
/// read into its settings (whose type gives the `type` name and whether it is durable).
/// `FileChecker.sinkTypes` lists every type; a `type` not in it is an error naming its place
/// and the known types, never taken for another.
struct SinkTypeCheck: Sendable {
    let name: String
    /// All the keys a sink of this type takes: `type`, its own, and the shared ones
    /// (the policy's; with `durable`, the outbox's too).
    let keys: [String]
    /// Delivered through the outbox: takes `concurrency`, `retry`, `rate` and `fallback`.
    let durable: Bool
    /// Its own keys read into its settings; nil after reporting what is wrong.
    let read: @Sendable (inout FileChecker, JSONNode, [JSONMember]) -> SinkKind?

    init<Settings: SinkSettings>(
        _ settings: Settings.Type, keys own: [String],
        read: @escaping @Sendable (inout FileChecker, JSONNode, [JSONMember]) -> Settings?
    ) {
        name = Settings.typeName
        durable = Settings.isDurable
        keys =
            ["type"] + own + (durable ? FileChecker.deliveryKeys : []) + FileChecker.policyKeys
            + (durable ? FileChecker.deliveryPolicyKeys : [])
        self.read = { checker, node, members in read(&checker, node, members).map(SinkKind.init) }
    }
}

/// The `sinks` object: name → sink configuration (Docs/rules.md#sinks).
extension FileChecker {
    static let sinkTypes: [SinkTypeCheck] = [
        SinkTypeCheck(StdoutSettings.self, keys: ["format"]) { checker, _, members in
            let format = members["format"].map { checker.choice($0.value, "'format'", ["text", "json"]) } ?? "text"
            return format.flatMap(AlertOutputFormat.init(rawValue:)).map(StdoutSettings.init(format:))
        },
        SinkTypeCheck(FileSettings.self, keys: ["path"]) { checker, node, members in
            checker.requireKey("path", in: node, members, suggested: [])
                .flatMap { checker.nonEmptyString($0.value, "'path'") }.map(FileSettings.init(path:))
        },
        SinkTypeCheck(
            WebhookSpec.self,
            keys: [
                "url", "urlEnv", "urlFile", "method", "headers", "timeout", "preset",
                "template", "secretEnv", "secretFile", "caFile"
            ]
        ) { checker, node, members in
            checker.webhook(node, members)
        },
        SinkTypeCheck(ExecSpec.self, keys: ["command", "timeout"]) { checker, node, members in
            checker.exec(node, members)
        }
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
        guard let typeName, let type = Self.sinkTypes.first(where: { $0.name == typeName }) else {
            // Without a known type the allowed keys are unknown: check against all of them,
            // so that a misspelled `type` still gets its suggestion.
            let suggested = checkKeys(members, allowed: Array(Set(Self.sinkTypes.flatMap(\.keys))).sorted())
            if let type = requireKey("type", in: node, members, suggested: suggested) {
                _ = choice(type.value, "'type'", Self.sinkTypes.map(\.name))
            }
            return nil
        }
        var kind: SinkKind?
        var delivery = DeliverySettings()
        var policy = SinkPolicy()
        let clean = isClean { checker in
            checker.checkKeys(members, allowed: type.keys)
            policy = checker.policy(sink: name, members.filter { type.keys.contains($0.key) })
            kind = type.read(&checker, node, members)
            if type.durable { delivery = checker.delivery(members) }
        }
        guard clean, let kind else { return nil }
        return (kind, delivery, policy)
    }

    fileprivate mutating func exec(_ node: JSONNode, _ members: [JSONMember]) -> ExecSpec? {
        var spec = ExecSpec(command: [])
        if let member = members["timeout"] {
            spec.timeout = positiveDuration(member.value, "'timeout'", limit: Limits.sinkTimeout) ?? spec.timeout
        }
        guard let command = requireKey("command", in: node, members, suggested: []) else { return nil }
        guard case .array(let elements) = command.value.value else {
            error(
                "'command' must be an array of strings (program and arguments), found \(command.value.value.typeName)",
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
