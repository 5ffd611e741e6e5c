import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertRules
import AlertStore
import AlertTestSupport
import DemoExchange
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

    @Test func theStateFolderSaysWhetherItHoldsADatabase() throws {
        let named = try #require(StateFolder.named(folder + "/state"))
        #expect(named == StateFolder(path: folder + "/state"))
        #expect(!named.hasDatabase)
        let store = try StateStore.open(named)
        store.close()
        #expect(named.hasDatabase)
    }

    @Test func demoRulesAreTheGivenFilesElseTheDemoFileElseTheBuiltInOnes() throws {
        let builtIn =
            #"{"version": 1, "rules": [{"id": "built-in", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
        let demoFile = folder + "/demo.json"
        let none = RuleFiles.demo(given: [], demoFiles: [(demoFile, builtIn)])
        #expect(none.paths == [])
        #expect(try none.rules.get().rules.map(\.id) == ["built-in"])

        let given = folder + "/silent.json"
        let silent =
            #"{"version": 1, "rules": [{"id": "silent", "symbol": "BTC", "notify": [], "when": {"price": {"above": 1}}}]}"#
        try silent.write(toFile: given, atomically: true, encoding: .utf8)
        let chosen = RuleFiles.demo(given: [given], demoFiles: [(demoFile, builtIn)])
        #expect(chosen.paths == [given])
        let printing = try chosen.rules.get()
        #expect(printing.rules.map(\.id) == ["silent"])
        let stdout = AlertListing.printingSinks(of: printing)
        #expect(printing.rules.allSatisfy { $0.notify.contains(where: stdout.contains) })

        let rules = try writeRules()

        try FileManager.default.copyItem(atPath: rules, toPath: demoFile)
        let fromFile = RuleFiles.demo(given: [], demoFiles: [(demoFile, builtIn)])
        #expect(fromFile.paths == [demoFile])
        #expect(try fromFile.rules.get().rules.map(\.id) == ["btc-high", "usd-spot"])

        guard case .failure(.invalid) = RuleFiles.demo(given: [], demoFiles: [(folder + "/none", "{")]).rules else {
            Issue.record("broken built-in rules loaded")
            return
        }
    }

    @Test func aSnapshotKeepsAYoungMarketListFetchesAnOldOneAndNamesASourceThatIsGone() async throws {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 11, interval: .milliseconds(200))))
        let port = try await exchange.start()
        let feed = BTSESource(endpoint: "http://127.0.0.1:\(port)")
        let http = PatientHTTPClient(NIOHTTPClient.shared)
        let btc = Market(symbol: "BTC-USD", base: "BTC", quote: "USD", future: false, active: true)
        let saved = MarketsSave(markets: [btc], source: feed.name, fetchedAt: 1_000)

        let young = try await CheckRun.snapshot(
            from: feed, http: http, markets: saved, refreshEvery: 3_600_000, now: 2_000)
        #expect(young.markets == saved)
        #expect(!young.ticks.isEmpty)
        #expect(young.lines == nil)

        let asGiven = try await CheckRun.snapshot(from: feed, http: http, markets: nil, refreshEvery: nil, now: 2_000)
        #expect(asGiven.markets == nil)

        let old = try await CheckRun.snapshot(from: feed, http: http, markets: saved, refreshEvery: 500, now: 2_000)
        let fetched = try #require(old.markets)
        #expect(fetched.fetchedAt == 2_000)
        #expect(fetched.source == feed.name)
        #expect(fetched.markets.count > 1)

        await exchange.stop()
        do {
            _ = try await CheckRun.snapshot(from: feed, http: http, markets: nil, refreshEvery: nil, now: 2_000)
            Issue.record("a stopped exchange gave a snapshot")
        } catch {
            #expect(error.source == feed.name)
            #expect(error.description.hasPrefix("\(feed.name): "))
        }
    }
}
