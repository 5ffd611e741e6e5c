/// URLs as they may appear in logs and errors.
///
/// Webhook URLs carry their secret in the path (Slack `…/services/T000/B000/XXXX`, Discord
/// `…/api/webhooks/ID/TOKEN`), in the first path segment (Telegram `…/bot123:ABC/sendMessage`),
/// in the userinfo or in the query. `redact` keeps only what says *where* a request went.
public enum RedactedURL {
    /// Marks a removed part that held more than one piece (path segments, query, fragment).
    public static let elided = "…"
    /// Replaces userinfo and any part that cannot be shown safely.
    public static let hidden = "<redacted>"

    /// Scheme, host and port are kept. Userinfo becomes `<redacted>@`; the query and the fragment
    /// become `?…` and `#…`; the path keeps its first segment only when it reads as a plain word
    /// (1–16 lower-case ASCII letters, such as `services` or `api`), and everything after it
    /// becomes `/…`. A first segment with digits, capitals, `:` or `-` may be a token
    /// (`bot123:ABC`, `secret-token`) and is replaced as well. A string that is not an absolute
    /// URL is replaced whole.
    ///
    ///     https://hooks.slack.com/services/T000/B000/XXXX  → https://hooks.slack.com/services/…
    ///     https://api.telegram.org/bot123:ABC/sendMessage  → https://api.telegram.org/…
    ///     https://user:pass@host:8443/x?token=abc          → https://<redacted>@host:8443/x?…
    public static func redact(_ url: String) -> String {
        let bytes = Array(url.utf8)
        guard let schemeEnd = schemeLength(bytes) else { return hidden }
        var out = String(decoding: bytes[0..<schemeEnd], as: UTF8.self) + "://"
        var index = schemeEnd + 3
        let authorityEnd =
            bytes[index...].firstIndex { $0 == ascii("/") || $0 == ascii("?") || $0 == ascii("#") } ?? bytes.count
        var hostStart = index
        if let at = bytes[index..<authorityEnd].lastIndex(of: ascii("@")) {
            out += hidden + "@"
            hostStart = at + 1
        }
        out += hostAndPort(bytes[hostStart..<authorityEnd])
        index = authorityEnd
        let pathEnd = bytes[index...].firstIndex { $0 == ascii("?") || $0 == ascii("#") } ?? bytes.count
        out += path(bytes[index..<pathEnd])
        if pathEnd < bytes.count { out += String(UnicodeScalar(bytes[pathEnd])) + elided }
        return out
    }

    /// Length of `scheme` when `bytes` starts with `scheme://`.
    private static func schemeLength(_ bytes: [UInt8]) -> Int? {
        guard let colon = bytes.firstIndex(of: ascii(":")), colon > 0,
            bytes.count >= colon + 3, bytes[colon + 1] == ascii("/"), bytes[colon + 2] == ascii("/"),
            isLetter(bytes[0]),
            bytes[0..<colon].allSatisfy({
                isLetter($0) || isDigit($0) || $0 == ascii("+") || $0 == ascii("-") || $0 == ascii(".")
            })
        else { return nil }
        return colon
    }

    /// The host as written (names, IPv4, bracketed IPv6) and a numeric port; anything else hidden.
    private static func hostAndPort(_ authority: ArraySlice<UInt8>) -> String {
        var host = authority
        var port: ArraySlice<UInt8>?
        if let colon = authority.lastIndex(of: ascii(":")), !authority[colon...].contains(ascii("]")) {
            host = authority[authority.startIndex..<colon]
            port = authority[(colon + 1)...]
        }
        let hostOK = host.allSatisfy { isLetter($0) || isDigit($0) || ".-_[]:".utf8.contains($0) }
        var out = hostOK ? String(decoding: host, as: UTF8.self) : hidden
        if let port {
            out += ":" + (port.allSatisfy(isDigit) ? String(decoding: port, as: UTF8.self) : hidden)
        }
        return out
    }

    private static func path(_ path: ArraySlice<UInt8>) -> String {
        guard path.count > 1 else { return String(decoding: path, as: UTF8.self) }
        let rest = path.dropFirst()
        let segmentEnd = rest.firstIndex(of: ascii("/")) ?? rest.endIndex
        let first = rest[rest.startIndex..<segmentEnd]
        guard first.count <= 16, !first.isEmpty, first.allSatisfy({ $0 >= ascii("a") && $0 <= ascii("z") }) else {
            return "/" + elided
        }
        let shown = "/" + String(decoding: first, as: UTF8.self)
        return segmentEnd == rest.endIndex ? shown : shown + "/" + elided
    }

    private static func ascii(_ c: Unicode.Scalar) -> UInt8 { UInt8(c.value) }
    private static func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= ascii("a") && (b | 0x20) <= ascii("z") }
    private static func isDigit(_ b: UInt8) -> Bool { b >= ascii("0") && b <= ascii("9") }
}
