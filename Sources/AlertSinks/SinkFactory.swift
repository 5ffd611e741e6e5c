import AlertHTTP
import AlertModel

/// Builds sinks from validated definitions, each by its kind's entry in `SinkRegistry.all`.
/// What a new sink kind touches is listed in Docs/sinks.md#adding-a-sink.
public enum SinkFactory {
    /// What sinks share: one HTTP client for every webhook (one connection cache), and where
    /// `urlEnv`/`secretEnv` are looked up.
    public struct Dependencies: Sendable {
        /// Nil: `CurlHTTPClient.shared` (libcurl, loaded on first use: only webhooks use it).
        public var httpClient: (any HTTPClient)?
        public var environment: EnvironmentLookup

        public init(
            httpClient: (any HTTPClient)? = nil, environment: @escaping EnvironmentLookup = Secrets.processEnvironment
        ) {
            self.httpClient = httpClient
            self.environment = environment
        }

        public static let shared = Dependencies()
    }

    /// Opens/prepares the sink; throws `SinkError` naming the sink when it cannot work.
    public static func make(_ definition: SinkDefinition) throws -> any Sink {
        try make(definition, dependencies: .shared)
    }

    /// `types`: the kinds it may be of (a test's own registry; by default `SinkRegistry.all`).
    public static func make(
        _ definition: SinkDefinition, dependencies: Dependencies, types: [SinkType] = SinkRegistry.all
    ) throws -> any Sink {
        guard let type = types.first(where: { $0.name == definition.kind.typeName }),
            let sink = try type.make(definition, dependencies: dependencies)
        else {
            throw SinkError(
                sink: definition.name,
                description: "sink \(UserText.single(definition.name)): type "
                    + "\(UserText.single(definition.kind.typeName)) is not in SinkRegistry.all")
        }
        return sink
    }

    /// All sinks by name; the first failure stops (and closes what was opened).
    public static func makeAll(_ definitions: [SinkDefinition]) throws -> [String: any Sink] {
        try makeAll(definitions, dependencies: .shared)
    }

    public static func makeAll(
        _ definitions: [SinkDefinition], dependencies: Dependencies, types: [SinkType] = SinkRegistry.all
    ) throws -> [String: any Sink] {
        var sinks: [String: any Sink] = [:]
        for definition in definitions {
            sinks[definition.name] = try make(definition, dependencies: dependencies, types: types)
        }
        return sinks
    }
}
