import AlertModel

/// A digest's renderings (Docs/sinks.md#digests): its JSON object, and the few lines a chat
/// message shows.
public enum DigestFormat {
    /// Lines a chat message lists before "and N more".
    public static let chatLines = 10

    /// `{"kind":"digest","id":…,"sink":…,"count":N,"first":TIME,"last":TIME,"held":B,"events":[…]}`,
    /// each event as `AlertFormat.json` writes it; one line, no trailing newline.
    public static func json(_ digest: Digest) -> String {
        var out = "{\"kind\":\"digest\",\"id\":" + JSONString.quote(digest.id)
        out += ",\"sink\":" + JSONString.quote(digest.sink)
        out += ",\"count\":\(digest.events.count)"
        out += ",\"first\":\"" + Timestamp.format(digest.first) + "\""
        out += ",\"last\":\"" + Timestamp.format(digest.last) + "\""
        out += ",\"held\":" + (digest.held ? "true" : "false")
        out += ",\"events\":[" + digest.events.map(AlertFormat.json).joined(separator: ",") + "]}"
        return out
    }

    /// The headline of a chat message: `pricealert: 37 alerts, 2026-11-24T21:00:00.000Z to …`,
    /// saying when quiet hours held them.
    public static func headline(_ digest: Digest) -> String {
        let span =
            digest.first == digest.last
            ? "at \(Timestamp.format(digest.first))"
            : "\(Timestamp.format(digest.first)) to \(Timestamp.format(digest.last))"
        return "pricealert: \(digest.events.count) alerts" + (digest.held ? " held in quiet hours, " : ", ") + span
    }

    /// A chat message's line for one event: `[rule] MESSAGE`, the message as a person reads it
    /// (`AlertFormat.said`: `resolved: `, `reminder N: `).
    public static func chatLine(_ alert: Alert) -> String {
        "[\(alert.rule)] " + AlertFormat.said(alert)
    }

    /// The headline, then one line per event (`line` renders it) up to `chatLines`, then
    /// `and N more` for the rest.
    public static func chatText(_ digest: Digest, line: (Alert) -> String = chatLine) -> String {
        var lines = [headline(digest)] + digest.events.prefix(chatLines).map(line)
        if digest.events.count > chatLines { lines.append("and \(digest.events.count - chatLines) more") }
        return lines.joined(separator: "\n")
    }
}
