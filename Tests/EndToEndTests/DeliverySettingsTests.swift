import AlertTestSupport
import Foundation
import Testing

/// A sink's own `retry` keys, as users write them, change what the binary does.
@Suite("end to end: per-sink delivery settings", .programs)
struct DeliverySettingsTests {
    @Test func aSinksMaxAgeTurnsAFailingAlertIntoADeadLetterSoon() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try DispatchTests.ticks.write(to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let hook = CrashRecoveryTests.Hook()
        try await LoopbackServer.with(hook.router()) { port in
            let rules = """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook", "concurrency": 2,
                                   "retry": {"backoff": "10m", "maxAge": "1s"}}},
                 "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}, "notify": ["ops"]}]}
                """
            try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let run = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir)
            #expect(run.status == 74)
            // By the next attempt both alerts are older than the sink's maxAge: dead letters, not
            // 24 h of retries. (On a slow machine the replay's own attempt may already be too late.)
            try await Task.sleep(for: .milliseconds(1_200))
            _ = try await PriceAlertBinary.run(
                [
                    "outbox", "flush", "--rules", "rules.json", "--state", "state",
                    "--timeout", "5s"
                ], in: dir)
            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
            #expect(list.stdout.hasSuffix("0 pending, 2 dead (state)\n"))
            let reasons = list.stdout.split(separator: "\n").filter { $0.hasPrefix("dead") }
                .compactMap { $0.split(separator: "reason: ").last.map(String.init) }
            #expect(reasons.count == 2)
            #expect(
                reasons.allSatisfy {
                    $0.hasPrefix("gave up after ") && $0.hasSuffix(" over 1s: webhook sink 'ops': HTTP 503")
                })
            #expect(hook.attempts.withLock { $0 } >= 2)
        }
    }
}
