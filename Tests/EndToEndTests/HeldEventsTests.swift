import AlertTestSupport
import Foundation
import Testing

extension LiveCommandTests {
    /// What quiet hours hold and what waits in an open digest can be seen while `run` runs:
    /// each hold is logged at `info`, `/metrics` counts holds and shows what waits, and
    /// `outbox list` lists every held or grouped event beside the outbox.
    @Test func heldAndGroupedEventsAreLoggedCountedAndListed() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        // `from == to` is a whole day: every event of the test is held (unless it spans midnight UTC).
        try """
        {"version": 2,
         "sinks": {"night": {"type": "file", "path": "out/night.jsonl", "quiet": [{"from": "00:00", "to": "00:00"}]},
                   "grouped": {"type": "file", "path": "out/grouped.jsonl", "group": {"window": "1d", "max": 1000}}},
         "rules": [{"id": "btc-always", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"},
                    "notify": ["night", "grouped"]}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let socket = try NotifySocket()
        try await withExchange { port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--state", "state", "--listen", "127.0.0.1:0"
                ],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address])
            let metrics = try await daemon.statusBase() + "/metrics"

            let held = try await daemon.waitForStderrLine(containing: "held 'btc-always:BTC:", timeout: 60)
            #expect(held.contains(" info ") && held.contains("for sink 'night' until "), "\(held)")

            let seen = try await poll(metrics, draining: socket) { response in
                (Self.sample(response.body, "pricealert_events_held") ?? 0) >= 2
                    && (Self.sample(response.body, "pricealert_digest_events") ?? 0) >= 2
            }
            #expect(Self.sample(seen.body, "pricealert_digests_open") == 1)
            #expect((Self.sample(seen.body, "pricealert_events_held_total") ?? 0) >= 2)

            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
            #expect(list.status == 0, "\(list.stderr)")
            let lines = list.stdout.split(separator: "\n").map(String.init)
            #expect(
                lines.contains {
                    $0.hasPrefix("held     night  btc-always:BTC:") && $0.contains("  quiet hours  event ")
                }, "\(list.stdout)")
            #expect(
                lines.contains {
                    $0.hasPrefix("grouped  grouped  btc-always:BTC:") && $0.contains("  open digest  event ")
                }, "\(list.stdout)")
            let summary = try #require(lines.last)
            #expect(
                summary.hasPrefix("0 pending, 0 dead, ") && summary.contains(" held by quiet hours, ")
                    && summary.hasSuffix(" in open digests (state)"), "\(summary)")
            let json = try await PriceAlertBinary.run(
                ["outbox", "list", "--state", "state", "--format", "json"], in: dir)
            let objects = json.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(
                objects.contains {
                    $0["state"] as? String == "held" && $0["sink"] as? String == "night"
                        && ($0["alert"] as? [String: Any])?["rule"] as? String == "btc-always"
                }, "\(json.stdout)")
            #expect(objects.contains { $0["state"] as? String == "grouped" && $0["sink"] as? String == "grouped" })
            #expect(try await daemon.stop(signal: SIGTERM) == 0)
        }
    }
}
