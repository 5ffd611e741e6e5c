/// Text a user wrote (a key, a sink name, a value), quoted for a one-line message. Control
/// characters (C0, DEL, C1), the Unicode line and paragraph separators and the bidirectional
/// overrides are escaped, and the text is cut after about `limit` characters with "…": so what
/// a file or an argument holds can neither split a message into lines (and forge a
/// `FILE:LINE:COLUMN` line), nor colour or reorder the terminal, nor make a message huge.
public enum UserText {
    /// Characters of escaped text kept before "…".
    public static let limit = 80

    /// `'text'`, as keys and names are quoted in messages.
    public static func single(_ text: some StringProtocol) -> String {
        "'" + escaped(text, quote: "'") + "'"
    }

    /// `"text"`, as string values are quoted in messages (JSON's escapes for `"` and `\`).
    public static func double(_ text: some StringProtocol) -> String {
        "\"" + escaped(text, quote: "\"") + "\""
    }

    /// The escaped text without quotes; `quote` (and `\`) are escaped too. Reads at most
    /// `limit` characters of `text`, whatever its length.
    public static func escaped(_ text: some StringProtocol, quote: Character? = nil) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            let piece = escape(scalar, quote: quote)
            if count + piece.count > limit {
                out += "…"
                return out
            }
            out += piece
            count += piece.count
        }
        return out
    }

    /// Escapes, in `bytes[start...]` (UTF-8), the characters `escaped` escapes but `\` and
    /// quotes, and keeps everything else as it is, at full length: a line that must stay one
    /// line (an alert's text listing) whatever text a feed or a rule put into it.
    /// `keepingLines`: newlines and tabs stay as they are (text a person wrote in several lines).
    public static func escapeControls(in bytes: inout [UInt8], from start: Int, keepingLines: Bool = false) {
        // Every escaped character's UTF-8 starts with a byte below 0x20, 0x7F, 0xC2 or 0xE2.
        guard bytes[start...].contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return }
        let text = String(decoding: bytes[start...], as: UTF8.self)
        var out = ""
        for scalar in text.unicodeScalars {
            let kept = scalar == "\\" || (keepingLines && (scalar == "\n" || scalar == "\t"))
            out += kept ? String(scalar) : escape(scalar, quote: nil)
        }
        bytes.replaceSubrange(start..., with: out.utf8)
    }

    /// `text` with `escapeControls`' escapes, at full length.
    public static func escapingControls(_ text: String, keepingLines: Bool = false) -> String {
        var bytes = Array(text.utf8)
        escapeControls(in: &bytes, from: 0, keepingLines: keepingLines)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func escape(_ scalar: Unicode.Scalar, quote: Character?) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\\": return "\\\\"
        case _ where quote.map({ Character(scalar) == $0 }) ?? false: return "\\" + String(scalar)
        case "\u{00}"..."\u{1F}", "\u{7F}"..."\u{9F}", "\u{2028}", "\u{2029}",
            "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}":
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: return String(scalar)
        }
    }
}
