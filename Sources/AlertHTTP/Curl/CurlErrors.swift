import CCurl

extension HTTPError {
    /// The error for a transfer that ended with `code`. `detail` is libcurl's error buffer, which
    /// names hosts and ports but, to be sure, has the raw URL replaced by the redacted one.
    /// `osError` is the transfer's last socket errno (`CURLINFO_OS_ERRNO`, 0 when none).
    init(curlCode code: CURLcode, osError: Int, detail: String, rawURL: String, redactedURL: String) {
        var reason = detail.isEmpty ? String(cString: pa_curl_easy_strerror(code)) : detail
        if !rawURL.isEmpty, reason.contains(rawURL) {
            reason = reason.replacingOccurrences(of: rawURL, with: redactedURL)
        }
        self.init(kind: Self.kind(of: code, osError: osError), url: redactedURL, reason: reason)
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_BAD_FUNCTION_ARGUMENT:
            isPermanent = true
        default:
            break
        }
    }

    /// By libcurl's code, never its message. A TLS handshake that failed because the connection
    /// did (`CURLE_SSL_CONNECT_ERROR` with a socket errno: a reset or a closed connection before
    /// or during the handshake, as when a load balancer restarts) is a transport failure like the
    /// same reset over http, not a TLS one.
    static func kind(of code: CURLcode, osError: Int = 0) -> Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_COULDNT_CONNECT:
            return .connectionRefused
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .dns
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS:
            return .certificate
        case CURLE_SSL_CONNECT_ERROR where osError != 0:
            return .other
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT:
            return .tls
        default:
            return .other
        }
    }
}

extension String {
    /// Every occurrence of `target` replaced; Foundation-free.
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        out += rest
        return out
    }
}
