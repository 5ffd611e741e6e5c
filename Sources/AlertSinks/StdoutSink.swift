import AlertModel
import AlertPolicy
import AlertRules
import Platform

/// Prints one line per alert on standard output: `AlertFormat.text` or the alert event's JSON
/// object (Docs/rules.md#the-alert-event). A digest is, in `json`, one line (its
/// `DigestFormat.json` object); in `text`, its headline and then each event's text line, every
/// event listed (standard output has no length limit), written with one write so lines of
/// other deliveries never fall between them.
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

    /// The lines printed for `digest` (without the final newline).
    public static func lines(for digest: Digest, format: AlertOutputFormat) -> String {
        switch format {
        case .text:
            return ([DigestFormat.headline(digest)] + digest.events.map { "  " + AlertFormat.text($0) }).joined(
                separator: "\n")
        case .json: return DigestFormat.json(digest)
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
        write(Self.line(for: alert, format: format))
    }

    public func send(_ delivery: Delivery) async -> SinkResult {
        switch delivery {
        case .event(let alert): return write(Self.line(for: alert, format: format))
        case .digest(let digest): return write(Self.lines(for: digest, format: format))
        }
    }

    private func write(_ text: String) -> SinkResult {
        switch output.writeLine(text) {
        case .success:
            return .delivered
        case .failure(let error) where error.isBrokenPipe:
            return .permanent(reason: "standard output is closed (\(error))")
        case .failure(let error):
            return .retry(reason: "cannot write to standard output: \(error)", after: nil)
        }
    }
}

extension StdoutSink {
    /// The `stdout` kind, for `SinkRegistry.all`.
    /// `format`: `"text"` (the default) or `"json"`.
    public static let sinkType = SinkType(
        StdoutSettings.self, keys: ["format"],
        read: { checker in
            guard checker.has("format") else { return StdoutSettings(format: .text) }
            return checker.choice("format", among: ["text", "json"])
                .flatMap(AlertOutputFormat.init(rawValue:)).map(StdoutSettings.init(format:))
        },
        make: { name, settings, _ in StdoutSink(name: name, format: settings.format) })
}
