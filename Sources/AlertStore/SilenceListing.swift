import AlertModel
import AlertPolicy

/// `silence list` (Docs/cli.md): silences as a line each or one JSON object per line.
public enum SilenceListing {
    /// A line per silence; in text, a last line counting those in force.
    public static func lines(_ records: [SilenceRecord], json: Bool, now: Int64) -> [String] {
        var lines = records.map { json ? Self.json($0, now: now) : Self.text($0, now: now) }
        if !json {
            lines.append("\(records.filter { $0.state(at: now) != "expired" }.count) in force, \(records.count) in all")
        }
        return lines
    }

    public static func text(_ record: SilenceRecord, now: Int64) -> String {
        var line = "\(record.id)  \(record.state(at: now))  rule \(record.rule)  symbol \(record.symbol)  "
        line += "\(Timestamp.format(record.from)) to \(Timestamp.format(record.until))"
        if !record.comment.isEmpty { line += "  " + UserText.double(record.comment) }
        return line
    }

    public static func json(_ record: SilenceRecord, now: Int64) -> String {
        var out = "{\"id\":" + JSONString.quote(record.id)
        out += ",\"state\":" + JSONString.quote(record.state(at: now))
        out += ",\"rule\":" + JSONString.quote(record.rule)
        out += ",\"symbol\":" + JSONString.quote(record.symbol)
        out += ",\"from\":" + JSONString.quote(Timestamp.format(record.from))
        out += ",\"until\":" + JSONString.quote(Timestamp.format(record.until))
        out += ",\"comment\":" + JSONString.quote(record.comment)
        out += ",\"created\":" + JSONString.quote(Timestamp.format(record.createdAt))
        out += ",\"expired\":" + (record.expiredAt.map { JSONString.quote(Timestamp.format($0)) } ?? "null")
        return out + "}"
    }
}
