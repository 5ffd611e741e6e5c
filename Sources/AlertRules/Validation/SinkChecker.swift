import AlertModel

/// How a rule file's sink of one `type` is checked: the keys it takes and how its own keys are
/// read into its settings (whose type gives the `type` name and whether it is durable). Each
/// kind has one, beside its sink (`SinkType.check` in AlertSinks); `RuleLoader.load` takes the
/// list. A `type` not in the list is an error naming its place and the known types, never
/// taken for another.
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

    /// A kind's check: `own` are its own keys (any other key is reported before `read` runs),
    /// and `read` reads them through the checker into its settings, or returns nil after
    /// reporting what is wrong. Settings are kept only when the whole sink checked clean.
    public init<Settings: SinkSettings>(
        _ settings: Settings.Type, keys own: [String],
        read: @escaping @Sendable (inout SinkSettingsChecker) -> Settings?
    ) {
        self.init(settings, keys: own) { checker, node, members in
            var context = SinkSettingsChecker(checker: checker, node: node, members: members)
            // The checker is handed over and back, not copied, so its problems stay one array.
            checker = FileChecker(file: "", bytes: [])
            defer { checker = context.checker }
            return read(&context)
        }
    }

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

extension SinkTypeCheck {
    /// `stdout`: `format`, `"text"` or `"json"`.
    public static let stdout = SinkTypeCheck(StdoutSettings.self, keys: ["format"]) { checker, _, members in
        let format = members["format"].map { checker.choice($0.value, "'format'", ["text", "json"]) } ?? "text"
        return format.flatMap(AlertOutputFormat.init(rawValue:)).map(StdoutSettings.init(format:))
    }

    /// `file`: `path`.
    public static let file = SinkTypeCheck(FileSettings.self, keys: ["path"]) { checker, node, members in
        checker.requireKey("path", in: node, members, suggested: [])
            .flatMap { checker.nonEmptyString($0.value, "'path'") }.map(FileSettings.init(path:))
    }

    /// `webhook`: where to post and how (`WebhookChecker.swift`).
    public static let webhook = SinkTypeCheck(
        WebhookSpec.self,
        keys: [
            "url", "urlEnv", "urlFile", "method", "headers", "timeout", "preset",
            "template", "secretEnv", "secretFile", "caFile"
        ]
    ) { checker, node, members in
        checker.webhook(node, members)
    }

    /// `exec`: `command` and `timeout`.
    public static let exec = SinkTypeCheck(ExecSpec.self, keys: ["command", "timeout"]) { checker, node, members in
        checker.exec(node, members)
    }

    /// The checks of the kinds this module knows, in `SinkRegistry.all`'s order: what
    /// `RuleLoader.load` checks against unless given the registry's list (`SinkRegistry.checks`).
    public static let builtIn: [SinkTypeCheck] = [stdout, file, webhook, exec]
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

    mutating func exec(_ node: JSONNode, _ members: [JSONMember]) -> ExecSpec? {
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
