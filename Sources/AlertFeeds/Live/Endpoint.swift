/// `--endpoint` handling: every source can be pointed at a local server, and its websocket URL
/// follows from the REST one (`http`→`ws`, `https`→`wss`).
public enum Endpoint {
    /// `base` without a trailing slash, joined to `path` (which starts with `/`).
    public static func join(_ base: String, _ path: String) -> String {
        var b = Substring(base)
        while b.hasSuffix("/") { b.removeLast() }
        return b + path
    }

    /// The websocket URL for a REST base: `http://h:1/x` → `ws://h:1/x`, `https` → `wss`.
    public static func websocket(for base: String) -> String {
        if base.hasPrefix("https://") { return "wss://" + base.dropFirst(8) }
        if base.hasPrefix("http://") { return "ws://" + base.dropFirst(7) }
        return base
    }

    /// `url` for logs: public feed URLs are worth showing whole, but a user's `--endpoint` may
    /// carry credentials, so userinfo, query and fragment are dropped.
    public static func display(_ url: String) -> String {
        var rest = Substring(url)
        var scheme = Substring("")
        if let range = rest.range(of: "://") {
            scheme = rest[..<range.upperBound]
            rest = rest[range.upperBound...]
        }
        if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] }
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        if let at = rest[..<hostEnd].lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return String(scheme + rest)
    }
}
