import AlertTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// Nothing lost: `replay --dispatch` is killed with SIGKILL while its first webhook delivery is
/// in flight (the receiver holds it); `outbox flush` in a new process then delivers every
/// alert, each once by `webhook-id`, to a real receiver on 127.0.0.1.
@Suite("end to end: kill -9 loses nothing", .programs)
struct CrashRecoveryTests {
    /// A webhook receiver that answers, once `gate` is open (at once if it is nil) and after
    /// `delay`, with the `status` set when the request arrived, and records the `webhook-id` of
    /// every 2xx it sends.
    final class Hook: Sendable {
        let status = Mutex(503)
        let delay = Mutex(Duration.zero)
        /// Holds every request until opened (a delivery in flight for as long as a test needs).
        let gate = Mutex<Gate?>(nil)
        let received = Mutex<[String]>([])
        let attempts = Mutex(0)
        /// One event per request received, before it is answered.
        let arrivals = EventCounter()

        /// Holds every request from now until `release`.
        func hold() { gate.withLock { $0 = Gate() } }

        /// Lets held requests be answered, and later ones at once.
        func release() { gate.withLock { $0 }?.open() }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                self.attempts.withLock { $0 += 1 }
                // The answer is decided on arrival: a request held across a change of `status`
                // gets the status it arrived under.
                let (status, delay) = (self.status.withLock { $0 }, self.delay.withLock { $0 })
                self.arrivals.record()
                await self.gate.withLock { $0 }?.pass()
                if delay > .zero { try? await Task.sleep(for: delay) }
                if (200..<300).contains(status), let id = request.headers[HTTPField.Name("webhook-id")!] {
                    self.received.withLock { $0.append(id) }
                }
                return Response(status: .init(code: status))
            }
            return router
        }
    }

    func withHook<T: Sendable>(_ hook: Hook, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        try await LoopbackServer.with(hook.router(), body)
    }

    @Test func killedMidDeliveryTheNextStartDeliversEverythingOnce() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Twelve crossings of 100 by BTC, one alert each.
        var lines: [String] = []
        for i in 0..<24 {
            lines.append(
                #"{"time": \#(1_700_000_000_000 + Int64(i) * 1000), "symbol": "BTC", "price": \#(i % 2 == 0 ? 99 : 101)}"#
            )
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let hook = Hook()
        hook.hold()
        try await withHook(hook) { port in
            let rules = """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook", "timeout": "30s"}},
                 "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}, "notify": ["ops"]}]}
                """
            try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let listed = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                    "--format", "json"
                ], in: dir)
            let expected = Set(
                listed.stdout.split(separator: "\n").compactMap { line -> String? in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
                })
            #expect(expected.count == 12)

            // The receiver holds the first delivery; the process is killed while it waits.
            let doomed = try PriceAlertBinary.start(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir)
            try await hook.arrivals.wait(for: 1)
            // Killed once every alert is in the outbox (read beside the running replay, as
            // `outbox list` may): the first delivery can start before the last rows are committed.
            var looks = 0
            while looks < 600,
                try await PriceAlertBinary.run(["outbox", "list", "--state", "state", "--format", "json"], in: dir)
                    .stdout.split(separator: "\n").count < 12
            {
                looks += 1
                try await Task.sleep(for: .milliseconds(100))
            }
            kill(doomed.pid, SIGKILL)
            _ = try await doomed.wait(timeout: 60)
            #expect(doomed.endedBySignal == true)
            #expect(hook.received.withLock { $0.isEmpty })

            let pending = try await PriceAlertBinary.run(
                ["outbox", "list", "--state", "state", "--format", "json"], in: dir)
            #expect(pending.status == 0)
            #expect(pending.stdout.split(separator: "\n").count >= 12)

            // The receiver is back; a new process delivers what the killed one left.
            hook.status.withLock { $0 = 200 }
            hook.release()
            let flushed = try await PriceAlertBinary.run(
                [
                    "outbox", "flush", "--rules", "rules.json", "--state", "state",
                    "--timeout", "30s"
                ], in: dir)
            #expect(flushed.status == 0)
            let received = hook.received.withLock { $0 }
            #expect(Set(received) == expected)
            #expect(received.count == expected.count)
            let after = try await PriceAlertBinary.run(
                ["outbox", "list", "--state", "state", "--format", "json"], in: dir)
            #expect(after.stdout.isEmpty)
        }
    }
}
