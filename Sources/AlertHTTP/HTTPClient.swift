/// One HTTP request. `url` may carry secrets (webhook tokens): it is never logged or put in an
/// error as is; see `RedactedURL`.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Whole-request timeout, milliseconds.
    public var timeout: Int64
    /// Connect timeout, milliseconds.
    public var connectTimeout: Int64
    /// A CA bundle to verify the server with instead of the system's. Verification is always on.
    public var caFile: String?
    /// How much of the response body is read (`ResponseLimit.rest` unless told otherwise).
    public var responseLimit: ResponseLimit

    public init(
        method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], timeout: Int64 = 10_000, connectTimeout: Int64 = 5_000, caFile: String? = nil,
        responseLimit: ResponseLimit = .rest
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.caFile = caFile
        self.responseLimit = responseLimit
    }
}

/// The most response-body bytes a request reads, and what a longer body means. Reading stops
/// there and the connection is closed, so a huge or endless reply costs at most `bytes` of
/// memory; headers are capped too (`maxHeaderBytes`).
public struct ResponseLimit: Sendable, Equatable {
    public var bytes: Int
    /// true: the response counts, with its body cut to `bytes` (a webhook needs only the
    /// status); false: the request fails, naming the URL and the limit.
    public var truncates: Bool

    public init(bytes: Int, truncates: Bool) {
        self.bytes = max(bytes, 0)
        self.truncates = truncates
    }

    /// REST replies (market lists, tickers, summaries): 32 MiB, far above the largest listing
    /// an exchange sends; a longer one fails the request.
    public static let rest = ResponseLimit(bytes: 32 << 20, truncates: false)
    /// Webhook replies: the status and the first 64 KiB of the body.
    public static let webhook = ResponseLimit(bytes: 64 << 10, truncates: true)
    /// Response header bytes (all lines together) a request accepts before it fails.
    public static let maxHeaderBytes = 256 << 10
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased, in the order received.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Seconds from the start of the request to the end of the response.
    public var duration: Double

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8], duration: Double) {
        self.status = status
        self.headers = headers
        self.body = body
        self.duration = duration
    }

    /// The first header called `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let key = name.lowercased()
        return headers.first { $0.name == key }?.value
    }
}

/// A request that got no HTTP response. `description` names the (redacted) URL and the reason.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case timeout
        case connectionRefused
        case dns
        /// The server's certificate was not accepted: expired, not yet valid, not for this host,
        /// or not signed by a trusted CA. Renewing it on the server fixes it.
        case certificate
        /// The TLS handshake was refused, or TLS cannot be set up here (an unreadable CA file).
        case tls
        case other
    }

    public var kind: Kind
    /// Already redacted.
    public var url: String
    public var reason: String
    /// True when sending the same request again cannot succeed: a malformed URL or method, a
    /// header with a line break, a scheme other than http/https. False for everything the
    /// network may fix by itself.
    public var isPermanent: Bool = false

    public init(kind: Kind, url: String, reason: String) {
        self.kind = kind
        self.url = url
        self.reason = reason
    }

    public var description: String { "\(url): \(reason)" }
}

/// Sends HTTP requests: `NIOHTTPClient` for the feeds, `CurlHTTPClient` (libcurl) for webhooks.
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
}
