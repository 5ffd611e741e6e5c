import AlertModel
import Foundation
import Logging
import Operations
import Platform

/// swift-log to standard error, once per process. `PRICEALERT_LOG_LEVEL` (trace … critical, in
/// any case, `warn` for warning) sets the level; the default is `info`, and a value that names
/// no level is said so at warning, then `info` is used. Never colours. When standard error is the journal
/// (`$JOURNAL_STREAM` names it, as systemd sets for `StandardError=journal`), lines carry
/// their syslog priority (`<4>…`) and no timestamp; otherwise swift-log's plain
/// `TIMESTAMP LEVEL LABEL: MESSAGE` lines.
enum Logs {
    static func bootstrap() {
        let setting = Environment.value("PRICEALERT_LOG_LEVEL").flatMap { $0.isEmpty ? nil : $0 }
        let chosen = setting.flatMap(level(named:))
        let level = chosen ?? .info
        let journal = JournalLogHandler.isJournal(journalStream: Environment.value("JOURNAL_STREAM"))
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler
            if journal {
                handler = JournalLogHandler(label: label)
            } else {
                handler = StreamLogHandler.standardError(label: label)
            }
            handler.logLevel = level
            return handler
        }
        if let setting, chosen == nil {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            Logger(label: "pricealert").warning(
                "PRICEALERT_LOG_LEVEL=\(UserText.double(setting)) is not a log level (\(names), or warn); logging at info"
            )
        }
    }

    /// The level `name` names: a swift-log level in any case, or `warn`; nil for anything else.
    static func level(named name: String) -> Logger.Level? {
        let name = name.trimmingCharacters(in: .whitespaces).lowercased()
        return name == "warn" ? .warning : Logger.Level(rawValue: name)
    }
}
