import AlertHTTP
import AlertTestSupport
import Testing

/// The webhooks' client (libcurl) against a real TLS server on 127.0.0.1 that resets a
/// connection before the handshake, or serves an expired certificate and then a renewed one:
/// what the network or a renewal fixes is worth another attempt.
@Suite struct WebhookTLSFailureTests {
    private func post(_ client: CurlHTTPClient, port: Int, ca: String) async -> Result<HTTPResponse, HTTPError> {
        await client.result(
            HTTPRequest(
                method: "POST", url: "https://127.0.0.1:\(port)/hook", body: Array("{}".utf8),
                timeout: 30_000, connectTimeout: 30_000, caFile: ca, responseLimit: .webhook))
    }

    @Test func aResetBeforeTheHandshakeIsATransportFailureAndRetried() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let client = CurlHTTPClient()
        try await TLSReceiver.with(certificates.valid, resetting: 1) { receiver, port in
            let first = await post(client, port: port, ca: certificates.ca)
            guard case .failure(let error) = first else { Issue.record("expected a reset, got \(first)"); return }
            #expect(receiver.current.resets == 1)
            #expect(error.kind == .other, "\(error)")
            #expect(error.reason.contains("reset"), "\(error)")
            guard case .retry = HTTPOutcome.classify(first, now: 0) else {
                Issue.record("a reset before the TLS handshake is not retried: \(first)")
                return
            }
            let second = await post(client, port: port, ca: certificates.ca)
            #expect((try? second.get())?.status == 200, "\(second)")
            #expect(receiver.current.requests == ["POST /hook {}"])
        }
    }

    @Test func anExpiredCertificateIsRetriedAndTheRenewedOneAccepted() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let client = CurlHTTPClient()
        try await TLSReceiver.with(certificates.expired) { receiver, port in
            let first = await post(client, port: port, ca: certificates.ca)
            guard case .failure(let error) = first else {
                Issue.record("expected a certificate error, got \(first)"); return
            }
            #expect(error.kind == .certificate, "\(error)")
            #expect(error.reason.contains("certificate has expired"), "\(error)")
            guard case .retry(_, let reason) = HTTPOutcome.classify(first, now: 0) else {
                Issue.record("an expired certificate is not retried: \(first)")
                return
            }
            #expect(reason.contains("certificate has expired"))
            #expect(receiver.current.requests.isEmpty)

            try receiver.serve(certificates.valid)
            let renewed = await post(client, port: port, ca: certificates.ca)
            #expect((try? renewed.get())?.status == 200, "\(renewed)")
            #expect(receiver.current.requests == ["POST /hook {}"])
        }
    }

    /// A certificate no trusted CA signed (here: one by a second CA the request does not trust)
    /// is a certificate failure too, retried.
    @Test func anUntrustedCertificateIsRetried() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let client = CurlHTTPClient()
        try await TLSReceiver.with(certificates.unknownCA) { _, port in
            let result = await post(client, port: port, ca: certificates.ca)
            guard case .failure(let error) = result else {
                Issue.record("expected a certificate error, got \(result)"); return
            }
            #expect(error.kind == .certificate, "\(error)")
            guard case .retry = HTTPOutcome.classify(result, now: 0) else {
                Issue.record("not retried: \(result)"); return
            }
        }
    }
}
