import AlertModel
import AlertPolicy

/// Where alerts go: the one plug-in point for delivery (stdout, file, webhook, exec).
///
/// A sink takes one `Delivery` value — an event or a digest of several
/// (Docs/sinks.md#digests) — so adding a field to alerts never breaks a sink. It never throws
/// and never calls back into the engine; it reports what happened, and whether trying again
/// could help, so that retrying is a separate stage rather than code inside every sink.
public protocol Sink: Sendable {
    /// The name from the rule file's `sinks` object (or `stdout` for the built-in one).
    var name: String { get }
    func send(_ alert: Alert) async -> SinkResult
    /// Sends one delivery. The default sends an event with `send(_ alert:)`, and a digest as
    /// its events one after the other, stopping at the first that fails (whose result it
    /// returns); sinks that can say a digest in one message implement this.
    func send(_ delivery: Delivery) async -> SinkResult
    /// Sends `deliveries` in order and returns one result for each, in that order. The default
    /// sends each with `send(_ delivery:)`, whatever the one before it did; a sink that can hand
    /// several to its receiver at once (`FileSink`: their lines in one `write(2)`) implements this.
    func send(_ deliveries: [Delivery]) async -> [SinkResult]
}

extension Sink {
    public func send(_ delivery: Delivery) async -> SinkResult {
        switch delivery {
        case .event(let alert):
            return await send(alert)
        case .digest(let digest):
            for alert in digest.events {
                let result = await send(alert)
                if result != .delivered { return result }
            }
            return .delivered
        }
    }

    public func send(_ deliveries: [Delivery]) async -> [SinkResult] {
        var results: [SinkResult] = []
        results.reserveCapacity(deliveries.count)
        for delivery in deliveries { results.append(await send(delivery)) }
        return results
    }
}

/// The outcome of one delivery attempt.
public enum SinkResult: Sendable, Equatable {
    case delivered
    /// A transient failure (disk full, timeout, 5xx): the same alert may succeed later.
    /// `after` is a suggested delay in milliseconds, when the receiver gave one.
    case retry(reason: String, after: Int64?)
    /// Trying again will not help (4xx, closed output, unknown sink).
    case permanent(reason: String)

    /// The reason of a failure, nil when delivered.
    public var failureReason: String? {
        switch self {
        case .delivered: return nil
        case .retry(let reason, _), .permanent(let reason): return reason
        }
    }
}

/// A sink cannot be set up (at start-up, before any tick is read). `description` is the whole
/// message and names the sink: `file sink 'journal': cannot open alerts/x.jsonl: folder
/// 'alerts' does not exist`.
public struct SinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sink's name.
    public let sink: String
    public let description: String

    public init(sink: String, description: String) {
        self.sink = sink
        self.description = description
    }
}
