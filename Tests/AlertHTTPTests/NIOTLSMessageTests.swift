import AlertHTTP
import AlertTestSupport
import Testing

/// The feeds' SwiftNIO client against HTTPS servers on 127.0.0.1 whose certificate is wrong in
/// one way each (`PrivateCA`): the error names that way and the URL, in words, with no NIO type
/// dump and no source path of the machine that built pricealert.
@Suite(.programs) struct NIOTLSMessageTests {
    /// The error of one request to a server serving `served`, trusting the private CA.
    func failure(
        serving served: KeyPath<PrivateCA, PrivateCA.Served>, host: String = "127.0.0.1"
    ) async throws -> HTTPError {
        let ca = try PrivateCA()
        defer { ca.remove() }
        let server = try TLSReceiver(serving: ca[keyPath: served], body: "[]")
        let port = try await server.start()
        defer { Task { await server.stop() } }
        do {
            _ = try await NIOHTTPClient().send(
                HTTPRequest(url: "https://\(host):\(port)/markets?token=s3cret", timeout: 60_000, caFile: ca.ca))
        } catch {
            #expect(server.answered.count == 0)
            return error
        }
        Issue.record("the request succeeded")
        return HTTPError(kind: .other, url: "", reason: "")
    }

    func expectPlain(_ error: HTTPError) {
        #expect(error.kind == .tls, "\(error)")
        for noise in ["NIOSSL", "BoringSSL", "handshakeFailed", "sslError", ".cc:", "/"] {
            #expect(!error.reason.contains(noise), "\(error.reason)")
        }
        #expect(error.description.hasPrefix("https://127.0.0.1:"), "\(error)")
        #expect(!error.description.contains("s3cret"), "\(error)")
    }

    @Test func aTrustedCertificateWorks() async throws {
        let ca = try PrivateCA()
        defer { ca.remove() }
        let server = try TLSReceiver(serving: ca.valid, body: "[]")
        let port = try await server.start()
        defer { Task { await server.stop() } }
        let response = try await NIOHTTPClient().send(
            HTTPRequest(url: "https://127.0.0.1:\(port)/", timeout: 60_000, caFile: ca.ca))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "[]")
    }

    @Test func anExpiredCertificateIsNamed() async throws {
        let error = try await failure(serving: \.expired)
        expectPlain(error)
        #expect(
            error.reason.hasPrefix("TLS handshake failed: certificate expired (not valid after "), "\(error.reason)")
    }

    @Test func aSelfSignedCertificateIsNamed() async throws {
        let error = try await failure(serving: \.selfSigned)
        expectPlain(error)
        #expect(error.reason == "TLS handshake failed: self-signed certificate", "\(error.reason)")
    }

    @Test func aCertificateOfAnUnknownCAIsNamed() async throws {
        let error = try await failure(serving: \.unknownCA)
        expectPlain(error)
        #expect(error.reason == "TLS handshake failed: certificate not trusted (unknown CA)", "\(error.reason)")
    }

    @Test func aCertificateForAnotherHostIsNamed() async throws {
        let error = try await failure(serving: \.otherHost)
        expectPlain(error)
        #expect(error.reason == "certificate is for another host (not 127.0.0.1)", "\(error.reason)")
    }
}
