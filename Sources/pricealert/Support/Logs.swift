import Logging

/// swift-log to standard error, once per process. `PRICEALERT_LOG_LEVEL` (trace … critical)
/// sets the level; the default is `info`.
enum Logs {
    static func bootstrap() {
        let level = Logger.Level(rawValue: Environment.value("PRICEALERT_LOG_LEVEL") ?? "") ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
