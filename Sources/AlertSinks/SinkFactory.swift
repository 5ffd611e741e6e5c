import AlertHTTP
import AlertModel

/// Builds sinks from validated definitions: one case per sink type. What else a new sink type
/// touches is listed in Docs/sinks.md#adding-a-sink.
public enum SinkFactory {
    /// What sinks share: one HTTP client for every webhook (one connection cache), and where
    /// `urlEnv`/`secretEnv` are looked up.
    public struct Dependencies: Sendable {
        /// Nil: `CurlHTTPClient.shared` (libcurl, loaded on first use: only webhooks use it).
        public var httpClient: (any HTTPClient)?
        public var environment: EnvironmentLookup

        public init(httpClient: (any HTTPClient)? = nil, environment: @escaping EnvironmentLookup = Secrets.processEnvironment) {
            self.httpClient = httpClient
            self.environment = environment
        }

        public static let shared = Dependencies()
    }

    /// Opens/prepares the sink; throws `SinkError` naming the sink when it cannot work.
    public static func make(_ definition: SinkDefinition) throws -> any Sink {
        try make(definition, dependencies: .shared)
    }

    public static func make(_ definition: SinkDefinition, dependencies: Dependencies) throws -> any Sink {
        let name = definition.name
        switch definition.kind {
        case .stdout(let format): return StdoutSink(name: name, format: format)
        case .file(let path): return try FileSink(name: name, path: path)
        case .webhook(let spec):
            return try WebhookSink(name: name, spec: spec, client: dependencies.httpClient ?? CurlHTTPClient.shared, environment: dependencies.environment)
        case .exec(let spec): return try ExecSink(name: name, spec: spec)
        }
    }

    /// All sinks by name; the first failure stops (and closes what was opened).
    public static func makeAll(_ definitions: [SinkDefinition]) throws -> [String: any Sink] {
        try makeAll(definitions, dependencies: .shared)
    }

    public static func makeAll(_ definitions: [SinkDefinition], dependencies: Dependencies) throws -> [String: any Sink] {
        var sinks: [String: any Sink] = [:]
        for definition in definitions { sinks[definition.name] = try make(definition, dependencies: dependencies) }
        return sinks
    }
}
