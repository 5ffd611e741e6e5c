import AlertModel
import AlertPolicy

/// The text a chat preset sends (Docs/sinks.md#what-a-person-reads): what a person reads of an
/// event or a digest, escaped as the platform needs and never longer than it takes, so a long
/// message is shortened here instead of being refused there and becoming a dead letter.
///
/// Escaping is per character, so every length is measured on the escaped text and a cut never
/// falls inside an escape.
public struct ChatText: Sendable, Equatable {
    /// How the platform counts its limit.
    public enum Unit: Sendable, Equatable {
        /// UTF-16 code units, as JavaScript's `length` counts; never fewer than characters.
        case utf16
        /// UTF-8 bytes.
        case utf8
    }

    /// What the platform would read as markup in plain text.
    public enum Escape: Sendable, Equatable {
        /// Nothing to escape.
        case plain
        /// Discord: a zero-width space after the `@` of `@everyone` and `@here`, so they read as
        /// text even where `allowed_mentions` is not honoured.
        case discord
        /// Slack mrkdwn: `&`, `<`, `>` as `&amp;`, `&lt;`, `&gt;` (so `<!channel>` is text).
        case slack
        /// Telegram `parse_mode` `HTML`: `&`, `<`, `>` as entities.
        case html
        /// Telegram `parse_mode` `MarkdownV2`: a backslash before each of ``_*[]()~`>#+-=|{}.!\``.
        case markdownV2
        /// Telegram's legacy `parse_mode` `Markdown`: a backslash before each of ``_*`[``.
        case markdown
    }

    public var limit: Int
    public var unit: Unit
    public var escape: Escape

    public init(limit: Int, unit: Unit, escape: Escape = .plain) {
        self.limit = limit
        self.unit = unit
        self.escape = escape
    }

    /// Discord: `content` holds at most 2000 characters.
    public static let discord = ChatText(limit: 2_000, unit: .utf16, escape: .discord)
    /// Slack: messages longer than 40 000 characters are cut by Slack.
    public static let slack = ChatText(limit: 40_000, unit: .utf16, escape: .slack)
    /// Telegram `sendMessage`: `text` holds 1-4096 characters.
    public static func telegram(_ escape: Escape) -> ChatText { ChatText(limit: 4_096, unit: .utf16, escape: escape) }
    /// ntfy: a message of at most 4096 bytes.
    public static let ntfy = ChatText(limit: 4_096, unit: .utf8)

    /// What marks text cut short.
    static let ellipsis: Character = "…"

    /// `AlertFormat.said(alert)`, escaped, cut with "…" to the limit. A message of nothing but
    /// white space, which Discord and Telegram refuse, reads `[rule] SYMBOL`.
    public func event(_ alert: Alert) -> String {
        var said = AlertFormat.said(alert)
        if said.allSatisfy(\.isWhitespace) { said = "[\(alert.rule)] \(alert.symbol)" }
        return fit(escaped(said), limit: limit)
    }

    /// A digest as one message: the headline, then one line per event (`line` renders it,
    /// unescaped) for at most `DigestFormat.chatLines` of them and as many as fit, then
    /// `and N more` for the rest. At least one event is listed, cut with "…" when it alone is too long.
    public func digest(_ digest: AlertModel.Digest, line: (Alert) -> String = DigestFormat.chatLine) -> String {
        let total = digest.events.count
        var text = escaped(DigestFormat.headline(digest))
        var used = measure(text)
        var listed = 0
        for event in digest.events.prefix(DigestFormat.chatLines) {
            let next = "\n" + escaped(line(event))
            let rest = total - listed - 1
            let note = rest > 0 ? measure("\n" + Self.more(rest)) : 0
            if used + measure(next) + note <= limit {
                text += next
                used += measure(next)
                listed += 1
                continue
            }
            if listed == 0 {
                // The first event alone is too long: show as much of it as fits.
                let room = limit - used - note
                let cut = fit(next, limit: room)
                if measure(cut) > 1 {
                    text += cut
                    used += measure(cut)
                    listed = 1
                }
            }
            break
        }
        if listed < total { text += "\n" + Self.more(total - listed) }
        return text
    }

    static func more(_ count: Int) -> String { "and \(count) more" }

    /// `text` with the platform's escapes.
    public func escaped(_ text: String) -> String {
        switch escape {
        case .plain: return text
        case .discord:
            return text.replacing("@everyone", with: "@\u{200B}everyone").replacing("@here", with: "@\u{200B}here")
        default: break
        }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text { out += escaped(character) }
        return out
    }

    private func escaped(_ character: Character) -> String {
        switch escape {
        case .plain, .discord:
            return String(character)
        case .slack, .html:
            switch character {
            case "&": return "&amp;"
            case "<": return "&lt;"
            case ">": return "&gt;"
            default: return String(character)
            }
        case .markdownV2:
            return "_*[]()~`>#+-=|{}.!\\".contains(character) ? "\\" + String(character) : String(character)
        case .markdown:
            return "_*`[".contains(character) ? "\\" + String(character) : String(character)
        }
    }

    /// `text`'s length as the platform counts it.
    public func measure(_ text: some StringProtocol) -> Int {
        switch unit {
        case .utf16: return text.utf16.count
        case .utf8: return text.utf8.count
        }
    }

    /// `text` (already escaped) when it fits in `limit`, else its first whole characters and
    /// "…" — never cutting a character, nor an escape, which is what `escaped` makes of one
    /// character — within `limit`.
    func fit(_ text: String, limit: Int) -> String {
        guard measure(text) > limit else { return text }
        let room = limit - measure(String(Self.ellipsis))
        guard room >= 0 else { return "" }
        var out = ""
        var used = 0
        var pending = ""
        for character in text {
            // An escape is a backslash and its character, or `&…;`: keep it whole.
            pending.append(character)
            if escapeOpen(pending) { continue }
            let size = measure(pending)
            if used + size > room { break }
            out += pending
            used += size
            pending = ""
        }
        return out + String(Self.ellipsis)
    }

    /// Whether `piece` is the start of an escape that is not complete yet.
    private func escapeOpen(_ piece: String) -> Bool {
        switch escape {
        case .plain, .discord: return false
        case .slack, .html: return piece.first == "&" && piece.last != ";" && piece.count < 6
        case .markdownV2, .markdown: return piece == "\\"
        }
    }
}
