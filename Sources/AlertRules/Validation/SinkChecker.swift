import AlertModel

/// How a rule file's sink of one `type` is checked: the keys it takes and how its own keys are
/// read into its settings (whose type gives the `type` name and whether it is durable). Each
/// kind has one, beside its sink (`SinkType.check` in AlertSinks); `RuleLoader.load` takes the
/// list (`SinkRegistry.checks`). A `type` not in the list is an error naming its place and the
/// known types, never taken for another.
public struct SinkTypeCheck: Sendable {
    /// The rule file's `type`.
    public let name: String
    /// All the keys a sink of this type takes: `type`, its own, and the shared ones
    /// (the policy's; with `durable`, the outbox's too).
    public let keys: [String]
    /// Delivered through the outbox: takes `concurrency`, `retry`, `rate` and `fallback`.
    public let durable: Bool
    /// Its own keys read into its settings; nil after reporting what is wrong.
    let read: @Sendable (inout FileChecker, JSONNode, [JSONMember]) -> SinkKind?

    /// A kind's check: `own` are its own keys (any other key is reported, with a "did you mean"
    /// drawn from all it takes), and `read` reads them through the checker into its settings, or
    /// returns nil after reporting what is wrong. Settings are kept only when the whole sink
    /// checked clean.
    public init<Settings: SinkSettings>(
        _ settings: Settings.Type, keys own: [String],
        read: @escaping @Sendable (inout SinkSettingsChecker) -> Settings?
    ) {
        name = Settings.typeName
        durable = Settings.isDurable
        keys =
            ["type"] + own + (durable ? FileChecker.deliveryKeys : []) + FileChecker.policyKeys
            + (durable ? FileChecker.deliveryPolicyKeys : [])
        self.read = { checker, node, members in
            var context = SinkSettingsChecker(checker: checker, node: node, members: members)
            // The checker is handed over and back, so its problems stay one array, not copied.
            checker = FileChecker(file: "", bytes: [])
            defer { checker = context.checker }
            return read(&context).map(SinkKind.init)
        }
    }
}

/// The `sinks` object: name → sink configuration (Docs/rules.md#sinks).
extension FileChecker {
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
        guard let typeName, let type = sinkTypes.first(where: { $0.name == typeName }) else {
            // Without a known type the allowed keys are unknown: check against all of them,
            // so that a misspelled `type` still gets its suggestion.
            let suggested = checkKeys(members, allowed: Array(Set(sinkTypes.flatMap(\.keys))).sorted())
            if let type = requireKey("type", in: node, members, suggested: suggested) {
                _ = choice(type.value, "'type'", sinkTypes.map(\.name))
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
}
