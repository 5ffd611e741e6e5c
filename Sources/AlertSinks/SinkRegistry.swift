import AlertModel

/// One sink kind as delivery knows it: its settings type, whose `typeName` is the rule file's
/// `type`, and how a definition of that kind becomes the sink. Each kind declares its own in its
/// folder (`StdoutSink.sinkType`, ...); `SinkRegistry.all` lists them.
public struct SinkType: Sendable {
    /// The rule file's `type`.
    public let name: String
    private let build: @Sendable (SinkDefinition, SinkFactory.Dependencies) throws -> (any Sink)?

    public init<Settings: SinkSettings>(
        _ settings: Settings.Type,
        make:
            @escaping @Sendable (_ name: String, _ settings: Settings, _ dependencies: SinkFactory.Dependencies) throws
            -> any Sink
    ) {
        name = Settings.typeName
        build = { definition, dependencies in
            guard let settings = definition.kind.settings(as: Settings.self) else { return nil }
            return try make(definition.name, settings, dependencies)
        }
    }

    /// The sink for `definition`; nil when its settings are not of this kind.
    func make(_ definition: SinkDefinition, dependencies: SinkFactory.Dependencies) throws -> (any Sink)? {
        try build(definition, dependencies)
    }
}

/// Every sink kind pricealert builds, one line each. The rule checker accepts the same `type`
/// names (`SinkRegistryTests` keeps the two lists equal).
public enum SinkRegistry {
    public static let all: [SinkType] = [
        StdoutSink.sinkType,
        FileSink.sinkType,
        WebhookSink.sinkType,
        ExecSink.sinkType
    ]
}
