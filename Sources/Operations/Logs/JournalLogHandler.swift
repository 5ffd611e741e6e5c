import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Log lines for systemd's journal when standard error is connected to it: each line starts
/// with its syslog priority, `<N>` (sd-daemon(3)), which journald strips and stores as the
/// entry's PRIORITY, so `journalctl -p warning` works. No timestamp (the journal keeps its
/// own) and no colours: `<4>pricealert: btse: connection closed; retrying in 500 ms sink=ops`.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let given = event.metadata { all.merge(given) { _, new in new } }
        let line = Self.line(level: event.level, label: label, message: "\(event.message)", metadata: all)
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { raw in // one write(2) per line: lines from threads never interleave
            var offset = 0
            while offset < raw.count {
                let written = write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    /// One line: `<N>LABEL: MESSAGE key=value …` (metadata sorted by key; newlines in the
    /// message become spaces, so an entry stays one journal entry).
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var line = "<\(priority(level))>\(label): " + message.map { $0.isNewline ? " " : String($0) }.joined()
        for key in metadata.keys.sorted() {
            line += " \(key)=\(metadata[key]!)"
        }
        return line
    }

    /// syslog(3) priorities: trace and debug are 7 (debug), critical is 2 (crit).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// True when `$JOURNAL_STREAM` (`DEVICE:INODE`, set by systemd for a unit whose output goes
    /// to the journal) names the file that `descriptor` is: a redirected stderr is not the journal.
    public static func isJournal(descriptor: Int32 = 2, journalStream: String?) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
