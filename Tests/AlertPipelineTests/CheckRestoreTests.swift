import AlertModel
import AlertPipeline
import AlertRules
import AlertStore
import Foundation
import Testing

/// What `check` does before it evaluates, as the pipeline does it: rule files through the rules
/// cache (`RuleFiles`) and the state folder restored in order (`CheckRun.restore`).
@Suite("check: rules cache and restoring state")
struct CheckRestoreTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("check-restore-\(UUID().uuidString)")
        .path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func writeRules() throws -> String {
        let path = folder + "/rules.json"
        let json = #"""
            {"version": 1, "rules": [
              {"id": "btc-high", "symbol": "BTC", "when": {"price": {"above": 100}}},
              {"id": "usd-spot", "match": {"quote": "USD"}, "when": {"price": {"above": 1}}}
            ]}
            """#
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func rulesTheCacheHoldsAreTakenFromIt() throws {
        let path = try writeRules()
        let cache = RuleCache(folder: StateFolder(path: folder))
        let (first, missedKey) = try RuleFiles.load([path], cache: cache).get()
        let key = try #require(missedKey)
        #expect(first.rules.map(\.id) == ["btc-high", "usd-spot"])
        #expect(cache.store(first.rules, rulesEnds: first.rulesEnds, for: key))
        let (second, missedAgain) = try RuleFiles.load([path], cache: cache).get()
        #expect(missedAgain == nil)
        #expect(second.rules == first.rules)
        #expect(try RuleFiles.load([path]).get().rules == first.rules)
    }

    @Test func unreadableRuleFilesAreNamed() {
        let missing = folder + "/missing.json"
        guard case .failure(.unreadable(let files)) = RuleFiles.load([missing], cache: nil) else {
            Issue.record("a missing rule file loaded")
            return
        }
        #expect(files.map(\.description).allSatisfy { $0.contains(missing) })
    }

    @Test func theSavedMarketListReachesTheInputAndIsSavedOnlyWhenItChanged() async throws {
        let ruleSet = try RuleFiles.load([try writeRules()]).get()
        let store = try StateStore.open(StateFolder(path: folder + "/state"))
        defer { store.close() }
        let btc = Market(symbol: "BTC-USD", base: "BTC", quote: "USD", future: false, active: true)
        let saved = MarketsSave(markets: [btc], source: "btse", fetchedAt: 1_000)
        try store.engineState.save([], markets: saved, now: 1_000)

        var evaluator = Evaluator(ruleSet: ruleSet, markets: nil)
        var handed: MarketsSave?
        let kept = try await CheckRun.restore(&evaluator, from: store, source: "btse", maxTickSkew: 5_000) {
            given, _ in
            handed = given
            return CheckRun.Input(ticks: [], lines: nil, malformed: 0, markets: given)
        }
        #expect(handed == saved)
        #expect(kept.marketsToSave == nil)
        #expect(kept.liveLimit != nil)
        #expect(kept.filled == [:])
        #expect(kept.listings == nil)

        let eth = Market(symbol: "ETH-USD", base: "ETH", quote: "USD", future: false, active: true)
        let fresh = MarketsSave(markets: [btc, eth], source: "ticks.jsonl", fetchedAt: 2_000)
        var fromFile = Evaluator(ruleSet: ruleSet, markets: nil)
        let changed = try await CheckRun.restore(&fromFile, from: store, source: nil, maxTickSkew: 5_000) { _, _ in
            CheckRun.Input(ticks: [], lines: [], malformed: 0, markets: fresh)
        }
        #expect(changed.marketsToSave == fresh)
        #expect(changed.liveLimit == nil)
        #expect(changed.filled == nil)
    }
}
