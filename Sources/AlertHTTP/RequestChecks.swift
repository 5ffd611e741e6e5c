/// What both clients refuse before sending: a request that cannot be written as HTTP/1.1
/// without changing its meaning. Sending it again cannot help, so the error is permanent.
extension HTTPRequest {
    /// The `User-Agent` every request carries.
    static let userAgent = "pricealert/0.1"

    /// Throws for a method that is not a token, or a header whose name is not a token or whose
    /// value holds a line break or NUL (which would smuggle in another header).
    func checkMethodAndHeaders(redactedURL: String) throws(HTTPError) {
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalid("invalid HTTP method", redactedURL: redactedURL)
        }
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte),
                !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else {
                throw .invalid("invalid request header", redactedURL: redactedURL)
            }
        }
    }

    /// Whether the request carries a body (and so `Content-Length`): any body, and POST, PUT
    /// and PATCH even when empty.
    var sendsBody: Bool {
        !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH"
    }

    /// RFC 9110 `tchar`: what a method or header name may contain.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension HTTPError {
    /// A request refused before it was sent; sending it again cannot help.
    static func invalid(_ reason: String, redactedURL: String) -> HTTPError {
        var error = HTTPError(kind: .other, url: redactedURL, reason: reason)
        error.isPermanent = true
        return error
    }
}

/// "64 KiB", "32 MiB", or bytes: a limit in an error message.
func sizeText(_ bytes: Int) -> String {
    if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
}
