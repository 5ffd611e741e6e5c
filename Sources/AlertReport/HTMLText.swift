/// Text for an HTML page: every user string (rule ids, symbols, messages) goes through here.
enum HTMLText {
    /// `text` with `& < > " '` as character references, so it can sit in element content and
    /// in quoted attribute values alike. C0 controls other than tab and line feed, which HTML
    /// forbids, become U+FFFD. At most `limit` characters are kept, then "…".
    static func escape(_ text: some StringProtocol, limit: Int = Int.max) -> String {
        var out = ""
        out.reserveCapacity(min(text.utf8.count, limit) + 16)
        var kept = 0
        for character in text {
            if kept == limit {
                out += "…"
                return out
            }
            kept += 1
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.append(character)
            default:
                if let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
                    scalar.value < 0x20 || scalar.value == 0x7F
                {
                    out += "\u{FFFD}"
                } else {
                    out.append(character)
                }
            }
        }
        return out
    }
}
