public import Logging
import Synchronization

/// Keeps log records so tests can check what was logged.
public final class CapturingLogHandler: Sendable {
    public struct Record: Sendable {
        public var label: String
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let storage = Mutex<[Record]>([])

    public init() {}

    public var records: [Record] { storage.withLock { $0 } }

    public func logger(label: String) -> Logger {
        Logger(label: label) { label in Handler(label: label, sink: self) }
    }

    private struct Handler: LogHandler {
        let label: String
        let sink: CapturingLogHandler
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
            let record = Record(label: label, level: event.level, message: "\(event.message)", metadata: merged)
            sink.storage.withLock { $0.append(record) }
        }
    }
}
