import AlertTestSupport
import Foundation
import Testing

/// The built binary delivering to an https webhook (a real TLS receiver on 127.0.0.1, trusted
/// through the sink's `caFile`) whose connection is reset before the handshake, or whose
/// certificate has expired: the alert waits and is delivered, never a dead letter.
@Suite("end to end: webhooks over TLS", .programs)
struct WebhookTLSTests {
    static let ticks = """
        {"time": 1700000000000, "symbol": "BTC", "price": 99}
        {"time": 1700000001000, "symbol": "BTC", "price": 101}

        """

    /// A folder with `r.json` (one rule, one https webhook at `port` trusting `ca`) and `t.jsonl`.
    private func folder(port: Int, ca: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try """
        {"version": 1,
         "sinks": {"ops": {"type": "webhook", "url": "https://127.0.0.1:\(port)/hook", "caFile": "\(ca)", "timeout": "30s",
                           "retry": {"backoff": "20ms", "maxBackoff": "100ms"}}},
         "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}, "notify": ["ops"]}]}
        """.write(to: dir.appendingPathComponent("r.json"), atomically: true, encoding: .utf8)
        try Self.ticks.write(to: dir.appendingPathComponent("t.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func aResetBeforeTheHandshakeIsRetriedAndTheAlertDelivered() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        try await TLSReceiver.with(certificates.valid, resetting: 1) { receiver, port in
            let dir = try folder(port: port, ca: certificates.ca)
            defer { try? FileManager.default.removeItem(at: dir) }
            let run = try await PriceAlertBinary.run(
                [
                    "check", "--rules", "r.json", "--ticks", "t.jsonl", "--state", "st",
                    "--drain-timeout", "60s"
                ], in: dir)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(receiver.current.resets == 1)
            #expect(receiver.current.requests.count == 1)
            #expect(receiver.current.requests.first?.hasPrefix("POST /hook {") == true)
            #expect(run.stderr.contains("Connection reset by peer; retry 1 in "), "\(run.stderr)")
            #expect(!run.stderr.contains("dead letter"), "\(run.stderr)")
            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "st"], in: dir)
            #expect(list.stdout.hasSuffix("0 pending, 0 dead (st)\n"), "\(list.stdout)")
        }
    }

    /// Until the certificate is renewed the alert waits in the outbox (retried, the reason in the
    /// log); once it is, `outbox flush` delivers it.
    @Test func anExpiredCertificateKeepsTheAlertUntilItIsRenewed() async throws {
        let certificates = try PrivateCA()
        defer { certificates.remove() }
        try await TLSReceiver.with(certificates.expired) { receiver, port in
            let dir = try folder(port: port, ca: certificates.ca)
            defer { try? FileManager.default.removeItem(at: dir) }
            let run = try await PriceAlertBinary.run(
                [
                    "check", "--rules", "r.json", "--ticks", "t.jsonl", "--state", "st",
                    "--drain-timeout", "1s"
                ], in: dir)
            #expect(run.status == 74)
            #expect(run.stderr.contains("certificate has expired; retry 1 in "), "\(run.stderr)")
            #expect(!run.stderr.contains("dead letter"), "\(run.stderr)")
            #expect(receiver.current.requests.isEmpty)
            let waiting = try await PriceAlertBinary.run(["outbox", "list", "--state", "st"], in: dir)
            #expect(waiting.stdout.hasSuffix("1 pending, 0 dead (st)\n"), "\(waiting.stdout)")

            try receiver.serve(certificates.valid)
            let flush = try await PriceAlertBinary.run(
                [
                    "outbox", "flush", "--rules", "r.json", "--state", "st",
                    "--timeout", "60s"
                ], in: dir)
            #expect(flush.status == 0, "\(flush.stderr)")
            #expect(flush.stderr.contains("outbox: 1 delivered, 0 dead-lettered, 0 still pending"), "\(flush.stderr)")
            #expect(receiver.current.requests.count == 1)
        }
    }
}
