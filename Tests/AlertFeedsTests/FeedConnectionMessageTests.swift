import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import Logging
import Testing

/// What a websocket feed says when it cannot connect: one reason in words, with the URL, for
/// a refused connection and for each way a server's certificate can be wrong.
@Suite(.programs) struct FeedConnectionMessageTests {
    /// A source with no market list whose live prices come from `url`.
    struct WebSocketOnly: PriceSource {
        let url: String
        var name: String { "test" }
        var endpoint: String { url }
        func loadMarkets(http: any HTTPClient) async throws -> [Market] { [] }
        func snapshot(http: any HTTPClient) async throws -> [Tick] { [] }
        func livePlan() -> LivePlan {
            LivePlan(
                transport: .websocket(
                    WebSocketPlan(url: url, subscribe: [], ping: nil, pingInterval: .seconds(60)) { _, _ in .control }))
        }
    }

    /// The reason of the first disconnect of a feed following `url`.
    func firstDisconnect(_ url: String) async throws -> String {
        let runner = FeedRunner(
            source: WebSocketOnly(url: url), http: NIOHTTPClient(),
            options: FeedOptions(
                staleAfter: .seconds(30), backoffBase: .milliseconds(100),
                backoffMaximum: .milliseconds(200)),
            logger: Logger(label: "test"))
        let recorder = LiveFeedTests.Recorder()
        let feed = Task { try await runner.run { recorder.append($0) } }
        _ = await recorder.wait { $0.count { if case .disconnected = $0 { true } else { false } } > 0 }
        feed.cancel()
        _ = await feed.result
        return try #require(
            recorder.all.lazy.compactMap { event -> String? in
                if case .disconnected(let reason, _) = event { return reason }
                return nil
            }.first)
    }

    func expectPlain(_ reason: String) {
        for noise in [
            "NIOSSL", "BoringSSL", "handshakeFailed", "NIOConnectionError", "SingleConnectionFailure", "errno", ".cc:"
        ] {
            #expect(!reason.contains(noise), "\(reason)")
        }
    }

    @Test func aRefusedConnectionIsSaidInWords() async throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        let reason = try await firstDisconnect("ws://127.0.0.1:\(port)/ws")
        expectPlain(reason)
        #expect(reason == "ws://127.0.0.1:\(port)/ws: connection refused", "\(reason)")
    }

    /// `served`'s handshake failure, from a `wss://` feed (which trusts the system's roots).
    func tlsReason(serving served: KeyPath<PrivateCA, PrivateCA.Served>) async throws -> (String, Int) {
        let ca = try PrivateCA()
        defer { ca.remove() }
        let server = try TLSReceiver(serving: ca[keyPath: served], body: "")
        let port = try await server.start()
        defer { Task { await server.stop() } }
        return (try await firstDisconnect("wss://127.0.0.1:\(port)/ws?key=s3cret"), port)
    }

    @Test func anExpiredCertificateIsNamedWithTheURL() async throws {
        let (reason, port) = try await tlsReason(serving: \.expired)
        expectPlain(reason)
        #expect(reason.hasPrefix("wss://127.0.0.1:\(port)/ws"), "\(reason)")
        #expect(!reason.contains("s3cret"), "\(reason)")
        #expect(reason.contains(": TLS handshake failed: certificate expired (not valid after "), "\(reason)")
    }

    @Test func aSelfSignedCertificateIsNamedWithTheURL() async throws {
        let (reason, port) = try await tlsReason(serving: \.selfSigned)
        expectPlain(reason)
        #expect(reason.hasPrefix("wss://127.0.0.1:\(port)/ws"), "\(reason)")
        #expect(reason.hasSuffix(": TLS handshake failed: self-signed certificate"), "\(reason)")
    }

    @Test func aCertificateOfAnUnknownCAIsNamedWithTheURL() async throws {
        let (reason, _) = try await tlsReason(serving: \.unknownCA)
        expectPlain(reason)
        #expect(reason.hasSuffix(": TLS handshake failed: certificate not trusted (unknown CA)"), "\(reason)")
    }
}
