import AlertFeeds
import AlertHTTP
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks
import Logging
import Testing

/// `LivePipeline.daemon`: what `run` and `demo` set on the pipeline from their options. The
/// `--listen` server is left to the end-to-end tests: swift-metrics is bootstrapped once per
/// process, and only the binary may do it.
@Suite("live: the daemon's pipeline")
struct LiveDaemonTests {
    @Test func theOptionsReachThePipeline() async throws {
        let rules = try EvaluatorTests.rules(
            #"{"version": 1, "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#)
        let logger = Logger(label: "test")
        let runner = FeedRunner(
            source: BTSESource(endpoint: "http://127.0.0.1:1"), http: NIOHTTPClient.shared, logger: logger)
        let delivery = AlertDelivery(
            route: .direct(Dispatcher(sinks: [:])),
            policy: try DeliveryPolicy(ruleSet: rules, silences: SilenceSet(), journal: nil))
        let pipeline = try await LivePipeline.daemon(
            ruleSet: rules, feeds: [LiveFeed(runner: runner)], feedOptions: runner.options, makeRunner: nil,
            delivery: delivery, logger: logger, listen: nil,
            drainTimeout: .seconds(3), duration: .seconds(5), rulePaths: ["rules.json"],
            saved: SavedState([]), saveEvery: .seconds(7))
        #expect(pipeline.drainTimeout == .seconds(3))
        #expect(pipeline.rulePaths == ["rules.json"])
        #expect(pipeline.saveEvery == .seconds(7))
        #expect(pipeline.stop != nil)
        #expect(pipeline.statusServer == nil)
        #expect(pipeline.silenceWatcher == nil)
    }

    @Test func aListenAddressIsWrittenAsItIsGiven() {
        #expect(ListenAddress(host: "127.0.0.1", port: 9464).description == "127.0.0.1:9464")
        #expect(ListenAddress(host: "::1", port: 0).description == "[::1]:0")
    }
}
