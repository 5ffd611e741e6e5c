import AlertTestSupport
import Foundation
import Testing

/// A sink's own `retry` keys, as users write them, change what the binary does.
@Suite("end to end: per-sink delivery settings")
struct DeliverySettingsTests {
    @Test func aSinksMaxAgeTurnsAFailingAlertIntoADeadLetterSoon() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try DispatchTests.ticks.write(to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let hook = CrashRecoveryTests.Hook()
        hook.delay.withLock { $0 = .zero }
        try await LoopbackServer.with(hook.router()) { port in
            let rules = """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook", "concurrency": 2,
                                   "retry": {"backoff": "10m", "maxAge": "500ms"}}},
                 "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}, "notify": ["ops"]}]}
                """
            try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let run = try await PriceAlertBinary.run(["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                                                      "--dispatch", "--state", "state"], in: dir)
            #expect(run.status == 74)
            #expect(run.stderr.contains("2 deliveries wait in the outbox"))
            // Older than the sink's maxAge by the next attempt: dead letters, not 24 h of retries.
            try await Task.sleep(for: .milliseconds(600))
            let flush = try await PriceAlertBinary.run(["outbox", "flush", "--rules", "rules.json", "--state", "state",
                                                        "--timeout", "5s"], in: dir)
            #expect(flush.status == 74)
            #expect(flush.stderr.contains("outbox: 0 delivered, 2 dead-lettered, 0 still pending"))
            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
            let dead = list.stdout.split(separator: "\n").filter { $0.hasPrefix("dead") }
            #expect(dead.count == 2)
            #expect(dead.allSatisfy { $0.contains("reason: gave up after 2 attempts over 500ms: webhook sink 'ops': HTTP 503") })
            #expect(list.stdout.hasSuffix("0 pending, 2 dead (state)\n"))
            #expect(hook.attempts.withLock { $0 } == 4)
        }
    }
}
