import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertPolicy
import AlertRules
import AlertSinks
import AlertTestSupport
import DemoExchange
import Foundation
import Logging
import Operations
import Synchronization
import Testing

/// `run`'s services in one group, against the embedded exchange on 127.0.0.1.
@Suite(.programs) struct LivePipelineTests {
    /// A sink that records each request and holds it until `release` opens.
    final class HeldSink: Sink {
        let name = "held"
        let asked = EventCounter()
        let release = Gate()
        private let received = Mutex<[String]>([])

        var delivered: [String] { received.withLock { $0 } }

        func send(_ alert: Alert) async -> SinkResult {
            asked.record()
            await release.pass()
            received.withLock { $0.append(alert.rule) }
            return .delivered
        }
    }

    /// The embedded exchange with prices on a random walk of `seed`, a step `every` interval,
    /// started on a free port (the caller stops it).
    static func exchange(seed: UInt64, every interval: Duration) async throws -> (DemoExchangeServer, Int) {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: seed, interval: interval)))
        return (exchange, try await exchange.start())
    }

    /// `rules` on the embedded exchange at `port`, delivered straight to `sinks`, shut down when
    /// `stop` opens; the test runner's own SIGTERM and SIGINT stay its own.
    static func pipeline(
        _ rules: RuleSet, port: Int, sinks: [String: any Sink], http: NIOHTTPClient,
        stop: Gate
    ) throws -> LivePipeline {
        let logger = Logger(label: "test")
        let runner = FeedRunner(source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: http, logger: logger)
        let monitor = PipelineMonitor(
            source: "btse", rules: rules.rules.map(\.id), staleAfter: runner.staleLimit,
            notifier: ServiceNotifier(environment: [:]), logger: logger)
        let delivery = AlertDelivery(
            route: .direct(Dispatcher(sinks: sinks)),
            policy: try DeliveryPolicy(ruleSet: rules, silences: SilenceSet(), journal: nil))
        var pipeline = LivePipeline(
            ruleSet: rules, runner: runner, delivery: delivery, logger: logger, monitor: monitor)
        pipeline.shutdownSignals = []
        pipeline.stop = { await stop.pass() }
        return pipeline
    }

    @Test(
        "shutdown in pipeline order: the feed stops first, every alert made is delivered, the status server answers until last"
    )
    func shutdownInPipelineOrder() async throws {
        let (exchange, port) = try await LivePipelineTests.exchange(seed: 3, every: .milliseconds(200))
        defer { Task { await exchange.stop() } }
        // 40 rules that each fire once, on the first BTC tick: one frame's burst.
        let ids = (0..<40).map { "btc-\($0)" }
        let rules = try EvaluatorTests.rules(
            """
            {"version": 2, "sinks": {"held": {"type": "stdout"}}, "defaults": {"notify": ["held"]},
             "rules": [\(ids.map { #"{"id": "\#($0)", "symbol": "BTC", "when": {"price": {"above": 1}}}"# }.joined(separator: ", "))]}
            """)
        let sink = HeldSink()
        let http = NIOHTTPClient()
        let stop = Gate()
        var pipeline = try Self.pipeline(rules, port: port, sinks: ["held": sink], http: http, stop: stop)
        let status = StatusServer(
            host: "127.0.0.1", port: 0, registry: PrometheusMetrics.isolated().registry,
            status: pipeline.monitor.status, logger: pipeline.logger
        ) {}
        let statusPort = try await status.start()
        pipeline.statusServer = status
        let running = Task { [pipeline] in try await pipeline.run() }

        // The first alert is at the sink and held there: the other 39 wait between the services.
        try await sink.asked.wait(for: 1)
        stop.open()
        // The feed has stopped, delivery is still held, and the status server still answers.
        var health = ""
        for _ in 0..<600 where !health.hasPrefix("stopping") {
            let response = try await http.send(
                HTTPRequest(url: "http://127.0.0.1:\(statusPort)/healthz", timeout: 60_000))
            health = String(decoding: response.body, as: UTF8.self)
            if !health.hasPrefix("stopping") { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(health.hasPrefix("stopping"))
        #expect(status.isRunning)
        #expect(sink.delivered.isEmpty)

        sink.release.open()
        let outcome = try await running.value
        #expect(outcome.stats.alerts == 40)
        #expect(sink.delivered == ids, "every alert made before the stop is delivered, in order")
        #expect(outcome.deliveryFailures == 0)
        #expect(!status.isRunning, "the status server stops last, with the group")
    }

    /// Records every alert it is asked to send.
    final class RecordingSink: Sink {
        let name = "quiet"
        let asked = EventCounter()
        private let received = Mutex<[Alert]>([])

        var delivered: [Alert] { received.withLock { $0 } }

        func send(_ alert: Alert) async -> SinkResult {
            received.withLock { $0.append(alert) }
            asked.record()
            return .delivered
        }
    }

    @Test(
        "a reload hands the reloaded rules' priorities to the policy stages: a rule made high priority skips the sink's quiet hours from then on"
    )
    func reloadedPriorityReachesDelivery() async throws {
        let (exchange, port) = try await LivePipelineTests.exchange(seed: 5, every: .milliseconds(200))
        defer { Task { await exchange.stop() } }
        // One rule that reminds every second while BTC is above 1, to a sink quiet all day
        // (quiet events dropped): nothing reaches the sink unless the rule is high priority.
        func ruleFile(priority: String) -> String {
            """
            {"version": 2,
             "sinks": {"quiet": {"type": "stdout", "quiet": [{"from": "00:00", "to": "00:00"}], "quietAction": "drop"}},
             "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"},
                        "priority": "\(priority)", "notify": ["quiet"]}]}
            """
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString).json")
            .path
        try ruleFile(priority: "normal").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rules = try RuleLoader.loadFiles(paths: [path]).get()
        let sink = RecordingSink()
        let http = NIOHTTPClient()
        let stop = Gate()
        var pipeline = try Self.pipeline(rules, port: port, sinks: ["quiet": sink], http: http, stop: stop)
        pipeline.rulePaths = [path]
        let (requests, reload) = AsyncStream.makeStream(of: Void.self)
        pipeline.reloadRequests = requests
        let policy = pipeline.delivery.policy
        let running = Task { [pipeline] in try await pipeline.run() }

        // The rule fired under its first priority: quiet hours took it.
        for _ in 0..<1200 where policy.counts.quietDropped == 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(policy.counts.quietDropped > 0)
        #expect(sink.delivered.isEmpty)

        try ruleFile(priority: "high").write(toFile: path, atomically: true, encoding: .utf8)
        reload.yield()
        try? await sink.asked.wait(for: 1)
        stop.open()
        let outcome = try await running.value
        let delivered = sink.delivered
        #expect(!delivered.isEmpty, "an event of the reloaded high-priority rule skips the quiet hours")
        #expect(delivered.allSatisfy { $0.rule == "btc" })
        #expect(outcome.deliveryFailures == 0)
    }

    @Test(
        "a slow evaluator holds the feed at the inbox's bound: at most feedEventsInFlight events wait, and none is lost"
    )
    func slowEvaluatorHoldsTheFeedAtTheBound() async throws {
        let (exchange, port) = try await LivePipelineTests.exchange(seed: 7, every: .milliseconds(5))
        defer { Task { await exchange.stop() } }
        // Two rules that fire on the first BTC tick: with two alerts in flight and the first
        // held at the sink, the evaluator waits at `AlertGate` while the exchange keeps sending.
        let rules = try EvaluatorTests.rules(
            """
            {"version": 2, "sinks": {"held": {"type": "stdout"}}, "defaults": {"notify": ["held"]},
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}},
                       {"id": "b", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
            """)
        let sink = HeldSink()
        let http = NIOHTTPClient()
        let stop = Gate()
        var pipeline = try Self.pipeline(rules, port: port, sinks: ["held": sink], http: http, stop: stop)
        pipeline.alertsInFlight = 2
        pipeline.feedEventsInFlight = 8
        let running = Task { [pipeline] in try await pipeline.run() }

        try await sink.asked.wait(for: 1)
        // The evaluator is stuck: let the exchange send far more frames than the bound.
        let sentThen = exchange.stats.framesSent
        for _ in 0..<1200 where exchange.stats.framesSent < sentThen + 100 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(exchange.stats.framesSent >= sentThen + 100)
        sink.release.open()
        stop.open()
        let outcome = try await running.value
        #expect(outcome.inboxPeak == 8, "the inbox filled up to its bound and never past it")
        #expect(outcome.inboxReceived == outcome.inboxSent, "every event the feed read reached the evaluator")
        #expect(outcome.inboxSent > 8)
        #expect(sink.delivered == ["a", "b"])
        #expect(outcome.deliveryFailures == 0)
    }
}
