import Daemon
import Logging

/// swift-log to standard error, once per process. `PRICEALERT_LOG_LEVEL` (trace … critical)
/// sets the level; the default is `info`. Never colours. When standard error is the journal
/// (`$JOURNAL_STREAM` names it, as systemd sets for `StandardError=journal`), lines carry
/// their syslog priority (`<4>…`) and no timestamp; otherwise swift-log's plain
/// `TIMESTAMP LEVEL LABEL: MESSAGE` lines.
enum Logs {
    static func bootstrap() {
        let level = Logger.Level(rawValue: Environment.value("PRICEALERT_LOG_LEVEL") ?? "") ?? .info
        let journal = JournalLogHandler.isJournal(journalStream: Environment.value("JOURNAL_STREAM"))
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler
            if journal { handler = JournalLogHandler(label: label) } else { handler = StreamLogHandler.standardError(label: label) }
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
