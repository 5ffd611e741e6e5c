import AlertModel
import AlertPolicy

/// `outbox list` (Docs/cli.md): the outbox's pending deliveries and dead letters, and what the
/// policy stages hold, as aligned text lines or one JSON object per line.
public enum OutboxListing {
    /// The lines for what one state folder holds: pending then dead rows, then the rows the
    /// policy stages hold; in text, a last line that counts them and names `folder`.
    public static func lines(
        pending: [OutboxEntry], dead: [OutboxEntry], waiting: [PolicyStateStore.Pending],
        json: Bool, folder: String
    ) -> [String] {
        var lines: [String] = []
        for (entry, isDead) in pending.map({ ($0, false) }) + dead.map({ ($0, true) }) {
            lines.append(json ? Self.json(entry, dead: isDead) : Self.text(entry, dead: isDead))
        }
        for row in waiting {
            lines.append(json ? Self.json(row) : Self.text(row))
        }
        if !json {
            var summary = "\(pending.count) pending, \(dead.count) dead"
            let held = waiting.filter { $0.quiet == true }.count, grouped = waiting.filter { $0.quiet == false }.count
            if held > 0 { summary += ", \(held) held by quiet hours" }
            if grouped > 0 { summary += ", \(grouped) in open digests" }
            if waiting.count > held + grouped {
                summary += ", \(waiting.count - held - grouped) held or in open digests"
            }
            lines.append(summary + " (\(folder))")
        }
        return lines
    }

    public static func text(_ entry: OutboxEntry, dead: Bool) -> String {
        var line = dead ? "dead     " : "pending  "
        line += "\(entry.sink)  \(entry.deliveryID)  "
        if case .digest(let digest) = entry.delivery {
            line += "(digest of \(digest.events.count)\(digest.held ? ", held" : ""))  "
        }
        if entry.urgent { line += "urgent  " }
        line += "attempts \(entry.attempts)  "
        line += dead ? "died \(Timestamp.format(entry.nextAttemptAt))" : "next \(Timestamp.format(entry.nextAttemptAt))"
        if let reason = entry.deadReason {
            line += "  reason: \(reason)"
        } else if let error = entry.lastError {
            line += "  last error: \(error)"
        }
        return line
    }

    /// `held     SINK  EVENT-ID  quiet hours  event TIME`: an event the policy stages keep
    /// for a sink (`grouped` in an open digest; `waiting` for a row that does not say which).
    public static func text(_ row: PolicyStateStore.Pending) -> String {
        let (state, why) = stage(row)
        return state + String(repeating: " ", count: max(1, 9 - state.count))
            + "\(row.sink)  \(row.alert.id)  \(why)  event \(Timestamp.format(row.alert.time))"
    }

    /// `{"state":"held"|"grouped"|"waiting","sink":…,"id":…,"alert":{…}}`.
    public static func json(_ row: PolicyStateStore.Pending) -> String {
        var out = "{\"state\":" + JSONString.quote(stage(row).state)
        out += ",\"sink\":" + JSONString.quote(row.sink)
        out += ",\"id\":" + JSONString.quote(row.alert.id)
        return out + ",\"alert\":" + AlertFormat.json(row.alert) + "}"
    }

    private static func stage(_ row: PolicyStateStore.Pending) -> (state: String, why: String) {
        switch row.quiet {
        case true?: return ("held", "quiet hours")
        case false?: return ("grouped", "open digest")
        case nil: return ("waiting", "quiet hours or open digest")
        }
    }

    /// An event row has `"alert"` (the event's JSON), a digest row `"digest"` (the digest's).
    public static func json(_ entry: OutboxEntry, dead: Bool) -> String {
        var out = "{\"state\":" + JSONString.quote(dead ? "dead" : "pending")
        out += ",\"sink\":" + JSONString.quote(entry.sink)
        out += ",\"id\":" + JSONString.quote(entry.deliveryID)
        out += ",\"urgent\":" + (entry.urgent ? "true" : "false")
        out += ",\"attempts\":\(entry.attempts)"
        out += ",\"created\":" + JSONString.quote(Timestamp.format(entry.createdAt))
        out += (dead ? ",\"died\":" : ",\"next\":") + JSONString.quote(Timestamp.format(entry.nextAttemptAt))
        out += ",\"lastError\":" + (entry.lastError.map(JSONString.quote) ?? "null")
        if dead { out += ",\"reason\":" + JSONString.quote(entry.deadReason ?? "") }
        switch entry.delivery {
        case .event(let alert): out += ",\"alert\":" + AlertFormat.json(alert) + "}"
        case .digest(let digest): out += ",\"digest\":" + DigestFormat.json(digest) + "}"
        }
        return out
    }
}
