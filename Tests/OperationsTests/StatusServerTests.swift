import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import Foundation
import Logging
import Operations
import Testing

/// `/metrics` and `/healthz` over real HTTP on 127.0.0.1, fed by a monitor as the pipeline feeds it.
@Suite("status server")
struct StatusServerTests {
    func get(_ url: String) async throws -> (status: Int, body: String) {
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let response = try await http.send(HTTPRequest(url: url, timeout: 60_000))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func servesPrometheusTextAndTheFeedsHealth() async throws {
        let (registry, factory) = PrometheusMetrics.isolated()
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let monitor = PipelineMonitor(
            source: "btse", rules: ["btc-high", "eth-low"], staleAfter: .seconds(30),
            notifier: ServiceNotifier(environment: [:]),
            metrics: PipelineMetrics(rules: ["btc-high", "eth-low"], factory: factory), logger: logger)
        let server = StatusServer(
            host: "127.0.0.1", port: 0, registry: registry, status: monitor.status,
            logger: logger
        ) { monitor.refresh(outboxDepth: 7) }
        let port = try await server.start()
        #expect(port > 0)
        let base = "http://127.0.0.1:\(port)"

        let starting = try await get("\(base)/healthz")
        #expect(starting.status == 503)
        #expect(starting.body == "starting: loading the market list\n")

        let feed = try #require(monitor.feed(named: "btse"))
        feed.feed(.markets([]))
        feed.feed(.connected(url: "ws://127.0.0.1/ws"))
        feed.prices(accepted: 5)
        monitor.dropped(.outOfOrder)
        feed.feed(.dropped(reason: "not JSON"))
        monitor.alerted(rule: "btc-high")
        monitor.alerted(rule: "@feed-stale")
        let healthy = try await get("\(base)/healthz")
        #expect(healthy.status == 200)
        #expect(healthy.body == "ok\n")

        let metrics = try await get("\(base)/metrics")
        await server.stop()
        #expect(metrics.status == 200)
        let lines = Set(metrics.body.split(separator: "\n").map(String.init))
        for expected in [
            #"pricealert_ticks_total{source="btse"} 5"#,
            #"pricealert_dropped_total{reason="out-of-order"} 1"#,
            #"pricealert_dropped_total{reason="malformed"} 1"#,
            #"pricealert_dropped_total{reason="invalid-price"} 0"#,
            #"pricealert_alerts_total{rule="btc-high"} 1"#,
            #"pricealert_alerts_total{rule="eth-low"} 0"#,
            #"pricealert_alerts_total{rule="@feed-stale"} 1"#,
            "pricealert_outbox_depth 7.0",
            #"pricealert_feed_connected{source="btse"} 1.0"#,
            #"pricealert_feed_stale{source="btse"} 0.0"#,
            #"pricealert_feed_reconnects_total{source="btse"} 0"#,
            "# TYPE pricealert_ticks_total counter",
            "# HELP pricealert_ticks_total Ticks accepted by the engine."
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
        #expect(lines.contains { $0.hasPrefix(#"pricealert_seconds_since_last_tick{source="btse"} "#) })
    }

    @Test func anAddressInUseIsAnError() async throws {
        let (registry, _) = PrometheusMetrics.isolated()
        let status = FeedStatus(staleAfter: .seconds(1))
        let first = StatusServer(
            host: "127.0.0.1", port: 0, registry: registry, status: status, logger: Logger(label: "test")
        ) {}
        let port = try await first.start()
        let second = StatusServer(
            host: "127.0.0.1", port: port, registry: registry, status: status, logger: Logger(label: "test")
        ) {}
        await #expect(throws: (any Error).self) { _ = try await second.start() }
        await first.stop()
    }

    @Test func everyMetricIsDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/observability.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for entry in MetricsCatalog.all {
            #expect(text.contains("`\(entry.name)`"), "Docs/observability.md does not list \(entry.name)")
        }
    }
}
