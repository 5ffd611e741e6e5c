import AlertModel
import AlertRules
import AlertSinks
import AlertStore
import AlertTestSupport
import Foundation
import Testing

/// `check` keeps the rules of its rule files in `rules.cache` in the state folder and takes
/// them from there while the files (and the binary) stay byte for byte the same.
@Suite("end to end: check's rules cache", .programs)
struct RuleCacheTests {
    static func rules(above: Double) -> String {
        """
        {"version": 1, "rules": [{"id": "r", "symbol": "AAA", "when": {"price": {"above": \(above)}}}]}
        """
    }

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func check(_ dir: URL, time: Int, price: Double) async throws -> PriceAlertBinary.Result {
        try "{\"time\": \(time), \"symbol\": \"AAA\", \"price\": \(price)}\n"
            .write(to: dir.appendingPathComponent("tick.jsonl"), atomically: true, encoding: .utf8)
        return try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "tick.jsonl",
                "--state", "st", "--format", "json"
            ], in: dir)
    }

    /// An edited rule file is read again, never answered from the cache.
    @Test func editedRulesAreReadAgain() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules(above: 101).write(
            to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let first = try await check(dir, time: 1_000, price: 100)
        #expect(first.status == 0 && first.stdout.isEmpty, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("st/rules.cache").path))
        try Self.rules(above: 99).write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let second = try await check(dir, time: 2_000, price: 100)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("\"threshold\":99"))
    }

    /// Unchanged files are answered from the cache: a cache written for these bytes with another
    /// threshold decides. A damaged cache is a miss, and the next run writes it again.
    @Test func unchangedFilesAreTakenFromTheCache() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = Self.rules(above: 101)
        try text.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let first = try await check(dir, time: 1_000, price: 100)
        #expect(first.status == 0 && first.stdout.isEmpty, "\(first.stderr)")

        let cache = RuleCache(folder: StateFolder(path: dir.appendingPathComponent("st").path))
        let key = try #require(RuleCache.key(files: [Array(text.utf8)], executable: PriceAlertBinary.url.path))
        let doctored = Rule(id: "r", scope: .symbols(["AAA"]), condition: .price(.above(50)))
        #expect(cache.store([doctored], for: key))
        let second = try await check(dir, time: 2_000, price: 100)
        #expect(second.stdout.contains("\"threshold\":50"), "the cache was not used: \(second.stdout)")

        try Data("damaged".utf8).write(to: URL(fileURLWithPath: cache.path))
        let third = try await check(dir, time: 3_000, price: 102)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.contains("\"threshold\":101"))
        #expect(
            cache.entry(for: key)?.rules == [Rule(id: "r", scope: .symbols(["AAA"]), condition: .price(.above(101)))])
    }

    /// A version 2 file goes through the cache like a version 1 file: what the cache holds is
    /// the file's parse, version 2 keys included, and the next run over the same bytes uses it.
    @Test func versionTwoRulesAreCachedWhole() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = """
            {"version": 2, "portfolios": {"pf": {"holdings": {"AAA": 2}, "cost": 300}},
             "rules": [{"id": "r", "symbol": "AAA", "when": {"all": [{"price": {"above": 101}}, {"fromHigh": {"window": "48h", "below": 5}}]},
                        "priority": "high", "expires": "2999-01-01T00:00:00Z", "for": "1m", "resolve": true},
                       {"id": "p", "portfolio": "pf", "when": {"pnl": {"below": -50}}, "repeat": {"every": "1h"}}]}
            """
        try text.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let parsed = try RuleLoader.load([RuleSource(path: "rules.json", bytes: Array(text.utf8))]).get()
        #expect(parsed.rules.allSatisfy { $0.fileVersion == 2 && $0.extras != nil })
        let first = try await check(dir, time: 1_000, price: 100)
        #expect(first.status == 0, "\(first.stderr)")
        let cache = RuleCache(folder: StateFolder(path: dir.appendingPathComponent("st").path))
        let key = try #require(RuleCache.key(files: [Array(text.utf8)], executable: PriceAlertBinary.url.path))
        #expect(cache.entry(for: key)?.rules == parsed.rules)
        let second = try await check(dir, time: 2_000, price: 100)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(cache.entry(for: key)?.rules == parsed.rules)
    }

    /// A version 3 file goes through the cache whole too: qualified symbols, `match.source`, the
    /// series scope (a spread's rule without the file's default hysteresis) and `volume`.
    @Test func versionThreeRulesAreCachedWhole() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = """
            {"version": 3, "sources": {"bn": {"type": "binance"}, "cb": {"type": "coinbase"}},
             "series": {"gap": {"spread": ["cb:AAA/USD", "bn:AAA/USDT"]}}, "defaults": {"hysteresis": 3},
             "rules": [{"id": "s", "symbols": ["bn:aaa/usdt", "AAA"], "when": {"volume": {"above": 1e6}}},
                       {"id": "m", "match": {"quote": "USDT", "source": ["bn"]}, "when": {"price": {"above": 1}}},
                       {"id": "g", "series": "gap", "when": {"price": {"above": 0.5}}}]}
            """
        try text.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let parsed = try RuleLoader.load([RuleSource(path: "rules.json", bytes: Array(text.utf8))]).get()
        #expect(parsed.rules.map(\.hysteresis) == [3, 3, 0])
        #expect(parsed.rules.allSatisfy { $0.fileVersion == 3 })
        let first = try await check(dir, time: 1_000, price: 100)
        #expect(first.status == 0, "\(first.stderr)")
        let cache = RuleCache(folder: StateFolder(path: dir.appendingPathComponent("st").path))
        let key = try #require(RuleCache.key(files: [Array(text.utf8)], executable: PriceAlertBinary.url.path))
        #expect(cache.entry(for: key)?.rules == parsed.rules)
        let second = try await check(dir, time: 2_000, price: 100)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(cache.entry(for: key)?.rules == parsed.rules)
    }
}
