import Crypto

/// Signs webhook bodies per the Standard Webhooks convention (standardwebhooks.com):
/// `webhook-signature: v1,<base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>"))>`.
///
/// The key: a secret starting with `whsec_` is the Standard Webhooks form, the rest being the
/// base64 of the key bytes; any other secret is used as its raw UTF-8 bytes.
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey

    /// Nil when a `whsec_` secret does not hold valid base64.
    public init?(secret: String) {
        if secret.hasPrefix("whsec_") {
            guard let bytes = Base64.decode(String(secret.dropFirst(6))), !bytes.isEmpty else { return nil }
            key = SymmetricKey(data: bytes)
        } else {
            key = SymmetricKey(data: Array(secret.utf8))
        }
    }

    /// The `webhook-signature` header value for one request.
    public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return "v1," + Base64.encode(hmac.finalize().withUnsafeBytes { Array($0) })
    }
}
