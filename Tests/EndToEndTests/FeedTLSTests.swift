import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// The built binary following a feed over TLS: the embedded exchange serving `https://` and
/// `wss://` with certificates of a private CA (`PrivateCA`). Trusted through `SSL_CERT_FILE`,
/// the market list (REST) and the prices (websocket) both arrive; a certificate of an unknown
/// CA, for another host or expired is refused with the URL and the reason, and retried, never
/// accepted.
@Suite("end to end: feeds over TLS", .programs)
struct FeedTLSTests {
    static let rules = """
        {"version": 1,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
        """

    private func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-feedtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        return dir
    }

    /// Runs `body` with the exchange serving TLS with `served` on `port` (0: a free one).
    private func withTLSExchange<T>(
        _ served: PrivateCA.Served, port: Int = 0, _ body: (DemoExchangeServer, Int) async throws -> T
    ) async throws -> T {
        let server = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: port, prices: .randomWalk(seed: 3, interval: .milliseconds(200)),
                tls: ExchangeTLS(certificateFile: served.certificate, keyFile: served.key)))
        let bound = try await server.start()
        do {
            let result = try await body(server, bound)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    private func run(_ port: Int, ca: String, in dir: URL) throws -> ObservedProcess {
        try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "https://127.0.0.1:\(port)",
                "--stale-after", "60s"
            ], in: dir, environment: ["SSL_CERT_FILE": ca])
    }

    @Test func aTrustedPrivateCAGivesTheMarketListThePricesAndTheSnapshot() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await withTLSExchange(certificates.valid) { server, port in
            let running = try run(port, ca: certificates.ca, in: dir)
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-listed""#, timeout: 60)
            #expect(server.stats.subscriptions >= 1, "the wss connection subscribed")
            #expect(server.requestLog.contains { $0.hasPrefix("/futures/api/inquire/initial/market") })
            #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
            let check = try await PriceAlertBinary.run(
                ["check", "--rules", "rules.json", "--source", "btse", "--endpoint", "https://127.0.0.1:\(port)"],
                in: dir, environment: ["SSL_CERT_FILE": certificates.ca])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stdout.contains(#""rule":"btc-listed""#))
        }
    }

    /// Which certificate is served, and the reason the feed must give.
    static let refusals: [(served: @Sendable (PrivateCA) -> PrivateCA.Served, reason: String)] = [
        ({ $0.unknownCA }, "TLS handshake failed: certificate not trusted (unknown CA)"),
        ({ $0.otherHost }, "certificate is for another host (not 127.0.0.1)"),
        ({ $0.expired }, "TLS handshake failed: certificate expired")
    ]

    @Test(arguments: 0..<refusals.count)
    func anUntrustedCertificateIsRefusedWithItsURLAndRetried(_ index: Int) async throws {
        let (served, reason) = Self.refusals[index]
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await withTLSExchange(served(certificates)) { server, port in
            let running = try run(port, ca: certificates.ca, in: dir)
            // The market list's URL and the reason, twice: retried, and refused again.
            try await running.occurrences(.stderr, of: reason, atLeast: 2, timeout: 60)
            let line = try await running.waitForStderrLine(containing: reason, timeout: 1)
            #expect(line.contains("https://127.0.0.1:\(port)/"), "\(line)")
            #expect(line.contains("retrying in"), "\(line)")
            #expect(try await running.stop(signal: SIGTERM) == 0)
            #expect(!running.stdout.contains("btc-listed"), "no price was accepted")
            #expect(server.requestLog.isEmpty, "no request was sent over the refused connection")
            #expect(server.stats.connectionsAccepted == 0)
        }
    }

    /// The market list came over a trusted connection; then the exchange comes back with an
    /// expired certificate: the websocket refuses it, names its `wss://` URL, and keeps retrying.
    @Test func theWebsocketRefusesAnExpiredCertificateAndKeepsRetrying() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (running, port) = try await withTLSExchange(certificates.valid) { _, port in
            let running = try run(port, ca: certificates.ca, in: dir)
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-listed""#, timeout: 60)
            return (running, port)
        }
        try await withTLSExchange(certificates.expired, port: port) { server, _ in
            let reason = "TLS handshake failed: certificate expired"
            try await running.occurrences(.stderr, of: reason, atLeast: 2, timeout: 60)
            let line = try await running.waitForStderrLine(containing: reason, timeout: 1)
            #expect(line.contains("wss://127.0.0.1:\(port)/ws/futures"), "\(line)")
            #expect(server.stats.connectionsAccepted == 0)
        }
        #expect(try await running.stop(signal: SIGTERM) == 0)
    }
}

/// deploy.md's "Trusting a private CA" walk-through, run as written by bash with the built
/// binary first on PATH: the CA and certificate made with openssl, the exchange over TLS, and
/// `markets` over https with the CA trusted.
@Suite("end to end: deploy.md's private CA walk-through", .programs)
struct PrivateCAWalkThroughTests {
    @Test func theCommandsWorkAsWritten() async throws {
        let text = try String(
            contentsOf: PriceAlertBinary.repo.appendingPathComponent("Docs/deploy.md"), encoding: .utf8)
        let section = try #require(text.range(of: "## Trusting a private CA"))
        let start = try #require(text.range(of: "```bash\n", range: section.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "```\n", range: start.upperBound..<text.endIndex))
        let script = String(text[start.upperBound..<end.lowerBound])
        #expect(script.contains("--tls-cert server.pem"))
        try? FileManager.default.removeItem(atPath: "/tmp/pricealert-ca")
        defer { try? FileManager.default.removeItem(atPath: "/tmp/pricealert-ca") }
        let binaries = PriceAlertBinary.url.deletingLastPathComponent().path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-xdg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = try ObservedProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-e", "-c", script],
            environment: [
                "PATH": binaries + ":/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "XDG_STATE_HOME": scratch.path
            ])
        let result = try await process.wait(timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("BTC"), "\(result.stdout)")
    }

    @Test func aCertificateThatCannotBeReadStopsTheExchangeNamingTheFile() async throws {
        let missing = try await PriceAlertBinary.run([
            "exchange", "--port", "0", "--tls-cert", "/nonexistent/server.pem", "--tls-key", "/nonexistent/server.key"
        ])
        #expect(missing.status == 66)
        #expect(missing.stderr == "exchange: error: /nonexistent/server.pem: no such file, or not readable\n")
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        // A key given as the certificate: readable, but no certificate in it.
        let swapped = try await PriceAlertBinary.run([
            "exchange", "--port", "0", "--tls-cert", certificates.valid.key, "--tls-key", certificates.valid.key
        ])
        #expect(swapped.status == 66)
        #expect(swapped.stderr.hasPrefix("exchange: error: \(certificates.valid.key): "), "\(swapped.stderr)")
    }
}
