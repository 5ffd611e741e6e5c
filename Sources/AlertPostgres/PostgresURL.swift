import Foundation

/// A `postgres://` (or `postgresql://`) store URL as libpq reads one:
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE&sslrootcert=FILE`, with
/// percent-encoded parts. The password is kept apart and never printed: `description` and every
/// error name the URL with `***` in its place.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// libpq's `sslmode`, minus `allow` (plain first, TLS only when refused), which postgres-nio
    /// cannot do and no careful setup wants.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, plain otherwise; the certificate is not checked.
        case prefer
        /// TLS or no connection; the certificate is not checked (libpq's `require` without a
        /// root certificate).
        case require
        /// TLS, with a certificate signed by `sslrootcert` (or the system's roots); any host name.
        case verifyCA = "verify-ca"
        /// TLS, with a certificate signed by `sslrootcert` (or the system's roots) for the host.
        case verifyFull = "verify-full"
    }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var sslMode: SSLMode
    /// A PEM file of the certificates that sign the server's (libpq's `sslrootcert`).
    public var sslRootCert: String?

    /// The URL is not one pricealert can use. `description` names it without its password.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var url: String
        public var reason: String
        public var description: String { "store URL \(url): \(reason)" }
    }

    /// Whether `text` names a PostgreSQL store rather than a state folder.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads `text`. libpq's defaults fill what it leaves out: port 5432, `sslmode=prefer`, the
    /// database named like the user. The user must be given (no environment is read for it).
    public init(_ text: String) throws(Invalid) {
        let shown = Self.redact(text)
        func invalid(_ reason: String) -> Invalid { Invalid(url: shown, reason: reason) }
        guard Self.isPostgres(text), let components = URLComponents(string: text) else {
            throw invalid("not a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL")
        }
        guard let user = components.user, !user.isEmpty else {
            throw invalid("no user (postgres://USER@HOST/DATABASE)")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.host = host
        self.port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw invalid("port \(port) is out of range") }
        let path = String(components.path.drop(while: { $0 == "/" }))
        self.database = path.isEmpty ? self.user : (path.removingPercentEncoding ?? path)
        self.sslMode = .prefer
        self.sslRootCert = nil
        try readParameters(components.queryItems ?? [], invalid)
        // The TLS library checks a certificate against a name it also sends as SNI, which an
        // IP address cannot be.
        if sslMode == .verifyFull, host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) {
            throw invalid("sslmode verify-full needs the host's name, as its certificate gives it, not an IP address")
        }
    }

    private mutating func readParameters(_ items: [URLQueryItem], _ invalid: (String) -> Invalid) throws(Invalid) {
        for item in items {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    let known = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw invalid("sslmode \(value) is not one of \(known)")
                }
                sslMode = mode
            case "sslrootcert":
                sslRootCert = value
            default:
                throw invalid("unknown parameter \(item.name) (known: sslmode, sslrootcert)")
            }
        }
    }

    /// The URL with the password as `***`, for logs, errors and `store status`.
    public var description: String {
        var text = "postgres://" + Self.encode(user)
        if password != nil { text += ":***" }
        text += "@" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)/" + Self.encode(database)
        text += "?sslmode=\(sslMode.rawValue)"
        if let sslRootCert { text += "&sslrootcert=\(sslRootCert)" }
        return text
    }

    /// `text` with whatever stands between `user:` and `@` replaced by `***`, for URLs too broken
    /// to parse.
    static func redact(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return text }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(rest[at...])
    }

    private static func encode(_ part: String) -> String {
        part.addingPercentEncoding(
            withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/")))
            ?? part
    }
}
