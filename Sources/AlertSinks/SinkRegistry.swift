import AlertModel
import AlertRules

/// One sink kind: its settings type, whose `typeName` is the rule file's `type`, how a rule
/// file's sink of that type is checked and read into those settings, and how a definition of
/// that kind becomes the sink. Each kind declares its own in its folder
/// (`StdoutSink.sinkType`, ...); `SinkRegistry.all` lists them.
public struct SinkType: Sendable {
    /// The rule file's `type`.
    public let name: String
    /// How a rule file's sink of this type is checked (`RuleLoader.load(_:sinkTypes:)`).
    public let check: SinkTypeCheck
    private let build: @Sendable (SinkDefinition, SinkFactory.Dependencies) throws -> (any Sink)?

    /// A kind whose own keys are `keys`, read and checked by `read` (see `SinkSettingsChecker`),
    /// and built by `make`.
    public init<Settings: SinkSettings>(
        _ settings: Settings.Type, keys: [String],
        read: @escaping @Sendable (inout SinkSettingsChecker) -> Settings?,
        make:
            @escaping @Sendable (_ name: String, _ settings: Settings, _ dependencies: SinkFactory.Dependencies) throws
            -> any Sink
    ) {
        name = Settings.typeName
        check = SinkTypeCheck(settings, keys: keys, read: read)
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

/// Every sink kind pricealert checks and builds, one line each.
public enum SinkRegistry {
    public static let all: [SinkType] = [
        StdoutSink.sinkType,
        FileSink.sinkType,
        WebhookSink.sinkType,
        ExecSink.sinkType
    ]

    /// The checks of `all`, for `RuleLoader.load(_:sinkTypes:)`.
    public static let checks: [SinkTypeCheck] = all.map(\.check)
}

extension RuleLoader {
    /// `load(_:sinkTypes:cachedRules:rulesEnds:)` checking sinks against `SinkRegistry.all`'s
    /// kinds: how the program loads rule files.
    public static func load(
        _ files: [RuleSource], cachedRules: [Rule]? = nil, rulesEnds: [Int?] = []
    ) -> Result<RuleSet, RuleFileErrors> {
        load(files, sinkTypes: SinkRegistry.checks, cachedRules: cachedRules, rulesEnds: rulesEnds)
    }

    /// `loadFiles(paths:sinkTypes:)` with `SinkRegistry.all`'s kinds.
    public static func loadFiles(paths: [String]) -> Result<RuleSet, RuleLoadFailure> {
        loadFiles(paths: paths, sinkTypes: SinkRegistry.checks)
    }
}
