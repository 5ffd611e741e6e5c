import AlertCore

/// Builds sinks from validated definitions: one line per sink type. Adding a sink type is a
/// new file and a new line here.
public enum SinkFactory {
    /// Opens/prepares the sink; throws `SinkError` naming the sink when it cannot work.
    public static func make(_ definition: SinkDefinition) throws -> any Sink {
        let name = definition.name
        switch definition.kind {
        case .stdout(let format): return StdoutSink(name: name, format: format)
        case .file(let path): return try FileSink(name: name, path: path)
        case .webhook, .exec: throw notAvailable(definition)
        }
    }

    /// All sinks by name; the first failure stops (and closes what was opened).
    public static func makeAll(_ definitions: [SinkDefinition]) throws -> [String: any Sink] {
        var sinks: [String: any Sink] = [:]
        for definition in definitions { sinks[definition.name] = try make(definition) }
        return sinks
    }

    private static func notAvailable(_ definition: SinkDefinition) -> SinkError {
        SinkError(sink: definition.name,
                  description: "sink '\(definition.name)': type \(definition.kind.typeName) is not available in this version yet")
    }
}
