/// Whether one delivery attempt succeeded, is worth repeating, or never will succeed.
///
/// Retrying and backing off are a stage of their own (STYLE lesson 2); this only says which way
/// an attempt went, so every sink that talks HTTP decides the same way.
public enum HTTPOutcome: Sendable, Equatable {
    case success
    /// Try again; `after` is the server's `Retry-After` in milliseconds when it sent a usable one.
    case retry(after: Int64?, reason: String)
    case permanent(reason: String)

    /// - 2xx: success.
    /// - 408, 425, 429 and 5xx: retry, honouring `Retry-After` (see `RetryAfter`).
    /// - Any other status (other 4xx, and 1xx/3xx: redirects are not followed, so a webhook that
    ///   redirects is misconfigured): permanent.
    /// - Errors: timeouts, refused connections, DNS failures and other transport failures
    ///   (resets and closed connections, also before or during a TLS handshake; empty replies)
    ///   retry. So do certificates the client does not accept (expired, wrong host, untrusted):
    ///   a renewed certificate fixes them, so they are retried until the sink's `maxAge`, with
    ///   libcurl's reason in each retry's log line. A refused handshake or a TLS set-up that
    ///   cannot work (`HTTPError.Kind.tls`) and requests that cannot be sent as written
    ///   (`HTTPError.isPermanent`) do not.
    ///
    /// Reasons never contain a URL other than the already-redacted one in an `HTTPError`.
    public static func classify(_ result: Result<HTTPResponse, HTTPError>, now: Int64) -> HTTPOutcome {
        switch result {
        case .success(let response):
            let status = response.status
            let reason = "HTTP \(status)"
            switch status {
            case 200..<300:
                return .success
            case 408, 425, 429, 500..<600:
                return .retry(after: RetryAfter.delay(from: response.header("retry-after"), now: now), reason: reason)
            default:
                return .permanent(reason: reason)
            }
        case .failure(let error):
            if error.isPermanent || error.kind == .tls {
                return .permanent(reason: error.description)
            }
            return .retry(after: nil, reason: error.description)
        }
    }
}
