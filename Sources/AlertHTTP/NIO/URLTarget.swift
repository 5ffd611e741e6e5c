/// The parts of an `http://`, `https://`, `ws://` or `wss://` URL a connection needs.
public struct URLTarget: Sendable, Equatable {
    /// https or wss: the connection is TLS.
    public var secure: Bool
    public var host: String
    public var port: Int
    /// Path and query as sent in the request line (`/` when the URL has none); the fragment is
    /// never sent.
    public var path: String
    /// The authority as written, without userinfo: the `Host` header.
    public var hostHeader: String
    /// An IP address (no TLS server name for it).
    public var isAddress: Bool
    /// The URL carries `user:password@`.
    public var hasUserInfo: Bool

    public enum Schemes: Sendable {
        case http, websocket
    }

    /// nil when `url` is not an absolute URL of one of `schemes` with a host and, if any, a numeric port (`host:` is the scheme's port).
    public init?(_ url: String, schemes: Schemes) {
        var rest = Substring(url)
        let (secureScheme, plainScheme) =
            switch schemes {
            case .http: ("https://", "http://")
            case .websocket: ("wss://", "ws://")
            }
        if rest.hasPrefix(secureScheme) {
            secure = true
            rest = rest.dropFirst(secureScheme.count)
        } else if rest.hasPrefix(plainScheme) {
            secure = false
            rest = rest.dropFirst(plainScheme.count)
        } else {
            return nil
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<end]
        path = rest[end...].isEmpty ? "/" : (rest[end] == "?" ? "/" + rest[end...] : String(rest[end...]))
        hasUserInfo = false
        if let at = authority.lastIndex(of: "@") {
            authority = authority[authority.index(after: at)...]
            hasUserInfo = true
        }
        hostHeader = String(authority)
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = Int(after.dropFirst())
                if port == nil, after.count > 1 { return nil }
            }
            isAddress = true
        } else {
            if let colon = authority.lastIndex(of: ":") {
                let digits = authority[authority.index(after: colon)...]
                port = Int(digits)
                if port == nil, !digits.isEmpty { return nil }
                authority = authority[..<colon]
            }
            host = String(authority)
            isAddress = host.allSatisfy { $0.isNumber || $0 == "." }
        }
        guard !host.isEmpty, (0...65535).contains(port ?? 0) else { return nil }
        self.port = port ?? (secure ? 443 : 80)
    }
}
