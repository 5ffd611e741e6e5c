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
}
