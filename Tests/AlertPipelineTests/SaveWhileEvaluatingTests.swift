import AlertEngine
import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertRules
import AlertSinks
import AlertStore
import AlertTestSupport
import DemoExchange
import Foundation
import Logging
import Operations
import Prometheus
import Testing

/// A save on its way to a store that writes slowly does not stop evaluation: the evaluator
/// hands the save to delivery and goes on with the ticks (it waits only when the saves' copies
/// handed on pile up), and the save is written once the store takes it.
@Suite(.programs) struct SaveWhileEvaluatingTests {
    /// A real state folder whose saves of symbols wait at `release` (a database that has not
    /// answered yet); a save of the market list alone, and everything else, is the folder's own.
    final class SlowSaves: DurableStore, EngineStateKeeper {
        let folder: StateStore
        let asked = EventCounter()
        let release = Gate()

        init(_ folder: StateStore) { self.folder = folder }

        func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave?, now: Int64) async throws {
            if !snapshots.isEmpty {
                asked.record()
                await release.pass()
            }
            try await folder.engine.save(snapshots, markets: markets, now: now)
        }
        func load() async throws -> [SymbolSnapshot] { try await folder.engine.load() }
        func load(lookingUp lookups: [String: [ClosedRange<Int64>]]) async throws -> [SymbolSnapshot] {
            try await folder.engine.load(lookingUp: lookups)
        }
        func loadMarkets() async throws -> MarketsSave? { try await folder.engine.loadMarkets() }
        func count() async throws -> Int { try await folder.engine.count() }

        var place: String { folder.place }
        var deliveries: any FlushableOutbox { folder.deliveries }
        var engine: any EngineStateKeeper { self }
        var journal: any PolicyJournal { folder.journal }
        var ledger: any BackfillRecorder { folder.ledger }
        var listings: any ListingKeeper { folder.listings }
        var sourceMarkets: any SourceMarketKeeper { folder.sourceMarkets }
        var localFolder: StateFolder? { folder.localFolder }
        func silenceRecords() async throws -> [SilenceRecord] { try await folder.silenceRecords() }
        func describe(_ error: any Error) -> String { folder.describe(error) }
        func stopping() { folder.stopping() }
        func close() async { folder.close() }
        func lost() async -> String? { folder.lost() }
    }

    /// The ticks the engine accepted so far, as `/metrics` counts them.
    static func ticks(_ registry: PrometheusCollectorRegistry) -> Int {
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        return text.split(separator: "\n").filter { $0.hasPrefix(MetricsCatalog.ticks) }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
    }

    @Test("ticks are evaluated while a save waits for the store; the save is written once the store answers")
    func evaluationGoesOnWhileASaveIsWritten() async throws {
        let (exchange, port) = try await LivePipelineTests.exchange(seed: 11, every: .milliseconds(20))
        defer { Task { await exchange.stop() } }
        let rules = try EvaluatorTests.rules(
            #"""
            {"version": 2, "sinks": {"out": {"type": "stdout"}}, "defaults": {"notify": ["out"]},
             "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
            """#)
        let path = NSTemporaryDirectory() + "pricealert-slow-save-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = SlowSaves(try StateAccess.open(path).get())
        let sink = LivePipelineTests.RecordingSink()
        let stop = Gate()
        var pipeline = try LivePipelineTests.pipeline(
            rules, port: port, sinks: ["out": sink], http: NIOHTTPClient(), stop: stop)
        pipeline.delivery = try await AlertDelivery.setUp(ruleSet: rules, sinks: ["out": sink], store: store)
        // The same monitor, counting into a registry of this test's own.
        let (registry, factory) = PrometheusMetrics.isolated()
        pipeline.monitor = PipelineMonitor(
            source: "btse", rules: rules.rules.map(\.id), staleAfter: pipeline.feeds[0].runner.staleLimit,
            notifier: ServiceNotifier(environment: [:]),
            metrics: PipelineMetrics(rules: rules.rules.map(\.id), factory: factory), logger: pipeline.logger)
        pipeline.saveEvery = .milliseconds(100)
        let running = Task { [pipeline] in try await pipeline.run() }

        // A save of BTC's state is with the store, which does not answer.
        try await store.asked.wait(for: 1)
        let then = Self.ticks(registry)
        // The exchange sends a frame every 20 ms: the engine takes 50 more while the save waits.
        for _ in 0..<1200 where Self.ticks(registry) < then + 50 { try await Task.sleep(for: .milliseconds(50)) }
        let during = Self.ticks(registry)
        store.release.open()
        stop.open()
        let outcome = try await running.value
        #expect(during >= then + 50, "the engine went on taking ticks while the save waited (\(then) → \(during))")
        // The run closed the folder; opened again, it holds BTC's state.
        let reopened = try StateAccess.open(path).get()
        defer { reopened.close() }
        #expect(try await reopened.engine.count() == 1, "BTC's state is in the folder")
        #expect(sink.delivered.first?.rule == "btc", "the alert made before the save reached its sink")
        #expect(outcome.deliveryFailures == 0)
        #expect(!outcome.unwritten)
    }
}
