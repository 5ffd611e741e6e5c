import AlertCore

/// Prints one line per alert on standard output: `AlertFormat.text` or the alert event's JSON
/// object (Docs/rules.md#the-alert-event).
public struct StdoutSink: Sink {
    public let name: String
    public let format: AlertOutputFormat
    private let output: StandardOutput

    public init(name: String, format: AlertOutputFormat, output: StandardOutput = .shared) {
        self.name = name
        self.format = format
        self.output = output
    }

    /// The line printed for `alert` (without the newline).
    public static func line(for alert: Alert, format: AlertOutputFormat) -> String {
        switch format {
        case .text: return AlertFormat.text(alert)
        case .json: return AlertFormat.json(alert)
        }
    }

    /// Appends `line(for:format:)`'s bytes to `out`, without the newline.
    public static func appendLine(for alert: Alert, format: AlertOutputFormat, to out: inout [UInt8]) {
        switch format {
        case .text: AlertFormat.appendText(alert, to: &out)
        case .json: AlertFormat.appendJSON(alert, to: &out)
        }
    }

    public func send(_ alert: Alert) async -> SinkResult {
        switch output.writeLine(Self.line(for: alert, format: format)) {
        case .success:
            return .delivered
        case .failure(let error) where error.isBrokenPipe:
            return .permanent(reason: "standard output is closed (\(error))")
        case .failure(let error):
            return .retry(reason: "cannot write to standard output: \(error)", after: nil)
        }
    }
}
