import AlertTestSupport
import Foundation
import Testing

/// The README's first command, `pricealert demo --duration 60s`: every rule of the demo rules
/// fires within the demo's minute (the minute is the binary's own `--duration`; the test only
/// waits for the process to end).
@Suite("end to end: the demo's minute", .programs)
struct DemoMinuteTests {
    @Test func everyDemoRuleFiresWithinTheMinute() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // No Rules/ folder here: the built-in copy of Rules/demo.json is used (a test keeps them equal).
        let result = try await PriceAlertBinary.run(["demo", "--duration", "60s"], in: dir, timeout: 180)
        #expect(result.status == 0, "\(result.stderr)")

        let file = try Data(contentsOf: PriceAlertBinary.repo.appendingPathComponent("Rules/demo.json"))
        let rules =
            try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])["rules"] as? [[String: Any]]
        let ids = try #require(rules).compactMap { $0["id"] as? String }
        #expect(ids.count >= 8)
        let fired = Set(
            result.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]") else { return nil }
                return String(line[line.index(after: open)..<close])
            })
        for id in ids { #expect(fired.contains(id), "\(id) did not fire:\n\(result.stdout)") }
        // Every kind of condition the file has is among them.
        let kinds = Set(
            rules!.flatMap { rule -> [String] in
                let when = rule["when"] as? [String: [String: Any]] ?? [:]
                return when.flatMap { key, body in body.keys.filter { $0 != "window" }.map { "\(key) \($0)" } }
            })
        #expect(
            kinds == [
                "price above", "price below", "price crossesAbove", "price crossesBelow", "price inside",
                "price outside", "change above", "change below"
            ])
        // A 7-day window among them: its history comes from the exchange's candles.
        let windows = Set(
            rules!.compactMap { (($0["when"] as? [String: [String: Any]])?["change"]?["window"] as? String) })
        #expect(windows.contains("7d"))
    }
}
