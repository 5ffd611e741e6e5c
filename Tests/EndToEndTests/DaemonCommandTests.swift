import AlertHTTP
import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `run` as systemd and Prometheus see it: notifications on a real unix datagram socket the
/// test binds, `/metrics` and `/healthz` scraped over HTTP, SIGTERM, against the real exchange.
extension LiveCommandTests {
    func writeRules(in dir: URL) throws {
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
    }

    @Test func runNotifiesSystemdReadyThenWatchdogThenStoppingAndSigtermExitsZero() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeRules(in: dir)
        let socket = try NotifySocket()
        let result = try await withExchange { port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--drain-timeout", "5s"
                ],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "400000"])
            let ready = try await socket.waitFor(line: "READY=1", timeout: 30)
            #expect(socket.messages[ready].contains("STATUS=following btse at ws://127.0.0.1:\(port)"))
            // Nothing before READY=1 but status lines: the watchdog starts with readiness.
            #expect(socket.messages[..<ready].allSatisfy { !$0.contains("WATCHDOG=1") })
            let ping = try await socket.waitFor(line: "WATCHDOG=1", after: ready, timeout: 60)
            _ = try await socket.waitFor(line: "WATCHDOG=1", after: ping, timeout: 60)
            // The first alert, before SIGTERM: on a loaded machine two pings can come before it.
            _ = try await daemon.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 60)
            kill(daemon.process.processIdentifier, SIGTERM)
            let stopping = try await socket.waitFor(line: "STOPPING=1", after: ping, timeout: 60)
            #expect(socket.messages[stopping].contains("STATUS=stopping"))
            return try await daemon.wait(timeout: 30)
        }
        #expect(result.status == 0)
        #expect(try jsonLines(result.stdout).contains { $0["rule"] as? String == "btc-listed" })
        #expect(result.stderr.contains("systemd notified: ready"))
    }

    @Test func runServesMetricsAndHealthAndHealthFailsWhileTheExchangeIsSilent() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeRules(in: dir)
        let socket = try NotifySocket()
        let result = try await withExchangeServer(faults: ExchangeFaults(invalidEvery: 5)) { exchange, port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--listen", "127.0.0.1:0", "--stale-after", "5s"
                ],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "300000"])
            let base = try await daemon.statusBase()
            _ = try await socket.waitFor(line: "READY=1", timeout: 30)

            // Prices flow: healthy, and the counters say what happened.
            let metrics = try await poll("\(base)/metrics", draining: socket) {
                (Self.sample($0.body, #"pricealert_ticks_total{source="btse"}"#) ?? 0) > 0
                    // Every 5th frame is malformed.
                    && (Self.sample($0.body, #"pricealert_dropped_total{reason="malformed"}"#) ?? 0) > 0
            }
            #expect(try await get("\(base)/healthz") == Response(status: 200, body: "ok\n"))
            #expect(Self.sample(metrics.body, #"pricealert_feed_connected{source="btse"}"#) == 1)
            #expect(Self.sample(metrics.body, #"pricealert_feed_stale{source="btse"}"#) == 0)
            #expect((Self.sample(metrics.body, #"pricealert_alerts_total{rule="btc-listed"}"#) ?? 0) >= 1)
            #expect(
                (Self.sample(metrics.body, #"pricealert_deliveries_total{sink="out",outcome="delivered"}"#) ?? 0) >= 1)
            #expect(Self.sample(metrics.body, "pricealert_outbox_depth") == 0)
            #expect(Self.sample(metrics.body, #"pricealert_feed_reconnects_total{source="btse"}"#) == 0)
            #expect(Self.sample(metrics.body, #"pricealert_seconds_since_last_tick{source="btse"}"#) != nil)
            #expect(metrics.body.contains("# TYPE pricealert_alerts_total counter"))

            // The exchange goes silent: /healthz fails with the reason, the watchdog stops.
            exchange.setFaults(ExchangeFaults(silenceAfter: .zero, silenceFor: .seconds(3600)))
            let silent = try await poll("\(base)/metrics", draining: socket) {
                Self.sample($0.body, #"pricealert_feed_stale{source="btse"}"#) == 1
            }
            let stale = try await get("\(base)/healthz")
            #expect(stale.status == 503)
            #expect(stale.body.hasPrefix("stale: no prices for "))
            #expect((Self.sample(silent.body, #"pricealert_seconds_since_last_tick{source="btse"}"#) ?? 0) >= 5)
            #expect((Self.sample(silent.body, #"pricealert_alerts_total{rule="@feed-stale"}"#) ?? 0) == 1)
            let pingsBefore = socket.receive().count { $0 == "WATCHDOG=1" }
            for _ in 0..<10 { // over six watchdog periods
                try await Task.sleep(for: .milliseconds(100))
                _ = socket.receive()
            }
            #expect(socket.receive().count { $0 == "WATCHDOG=1" } == pingsBefore)

            // Prices again: healthy again.
            exchange.setFaults(ExchangeFaults())
            _ = try await poll("\(base)/healthz", draining: socket) { $0.status == 200 }
            let back = try await socket.waitFor(line: "WATCHDOG=1", after: socket.messages.count - 1, timeout: 60)
            #expect(back > 0)
            kill(daemon.process.processIdentifier, SIGTERM)
            return try await daemon.wait(timeout: 30)
        }
        #expect(result.status == 0)
        #expect(result.stderr.contains("run: "))
    }

    @Test func demoIsTheSameDaemon() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = try NotifySocket(abstract: true)
        let demo = try PriceAlertBinary.start(
            ["demo", "--interval", "200ms", "--listen", "127.0.0.1:0"], in: dir,
            environment: ["NOTIFY_SOCKET": socket.address])
        let base = try await demo.statusBase()
        _ = try await socket.waitFor(line: "READY=1", timeout: 30)
        // One line per feed: BTSE's and the three sources of Rules/demo-consensus.json.
        let health = try await poll("\(base)/healthz", draining: socket) { $0.status == 200 }.body
        #expect(
            health.hasPrefix("ok\n") && health.contains("btse: ok\n") && health.contains("demo-okx: ok\n"), "\(health)")
        #expect(try await demo.stop(signal: SIGTERM) == 0)
        _ = try await socket.waitFor(line: "STOPPING=1", timeout: 60)
    }

    /// `run` notifying a webhook (through the outbox) whose receiver holds every delivery; SIGTERM
    /// once the first is in flight. The receiver answers right after the SIGTERM with
    /// `answerAfterSignal`, else only once `run` has ended. Returns how `run` ended and the
    /// deliveries the receiver had answered with a 2xx by then.
    func sigtermWithDeliveryInFlight(
        hook: CrashRecoveryTests.Hook, drainTimeout: String,
        answerAfterSignal: Bool
    ) async throws -> (PriceAlertBinary.Result, answered: [String]) {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        hook.hold()
        return try await withExchange { exchangePort in
            try await LoopbackServer.with(hook.router()) { hookPort in
                try """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(hookPort)/hook", "timeout": "30s"}},
                 "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["ops"]}]}
                """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                let daemon = try PriceAlertBinary.start(
                    [
                        "run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                        "http://127.0.0.1:\(exchangePort)",
                        "--state", "state", "--drain-timeout", drainTimeout
                    ], in: dir)
                try await hook.arrivals.wait(for: 1)
                #expect(hook.attempts.withLock { $0 } == 1)
                kill(daemon.pid, SIGTERM)
                if answerAfterSignal { hook.release() }
                let result = try await daemon.wait(timeout: 60)
                let answered = hook.received.withLock { $0 }
                hook.release()
                return (result, answered)
            }
        }
    }

    @Test func sigtermDrainsTheDeliveryInFlightAndExitsZero() async throws {
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        let (result, answered) = try await sigtermWithDeliveryInFlight(
            hook: hook, drainTimeout: "60s", answerAfterSignal: true)
        #expect(result.status == 0)
        #expect(answered.count == 1) // answered after SIGTERM, and waited for
        #expect(!result.stderr.contains("wait in the outbox"))
    }

    /// The receiver answers only after `run` has ended: it ended at its 1 s drain timeout, not
    /// by waiting for the delivery.
    @Test func sigtermWaitsNoLongerThanTheDrainTimeout() async throws {
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        let (result, answered) = try await sigtermWithDeliveryInFlight(
            hook: hook, drainTimeout: "1s", answerAfterSignal: false)
        #expect(answered.isEmpty)
        // The row is safe in the outbox for the next start: a SIGTERM stop is still exit 0.
        #expect(result.status == 0)
        #expect(result.stderr.contains("1 deliveries wait in the outbox"))
    }

    @Test func aListenAddressInUseExits69() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeRules(in: dir)
        let listener = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let ready = try await listener.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let port = try #require(ready.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let result = try await PriceAlertBinary.run(
            [
                "run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                "http://127.0.0.1:9", "--listen", "127.0.0.1:\(port)"
            ], in: dir)
        #expect(try await listener.stop(signal: SIGTERM) == 0)
        #expect(result.status == 69)
        #expect(result.stderr.contains("cannot listen on 127.0.0.1:\(port)"))
    }

    struct Response: Equatable {
        var status: Int
        var body: String
    }

    func get(_ url: String) async throws -> Response {
        let response = try await CurlHTTPClient.shared.send(HTTPRequest(url: url, timeout: 60_000))
        return Response(status: response.status, body: String(decoding: response.body, as: UTF8.self))
    }

    /// GETs `url` every 100 ms until `done` holds (at most 60 s), and returns that response.
    /// Reads `socket` meanwhile, as systemd would: a datagram socket queues only a few messages.
    func poll(_ url: String, draining socket: NotifySocket, until done: (Response) -> Bool) async throws -> Response {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            _ = socket.receive()
            let response = try await get(url)
            if done(response) { return response }
            if ContinuousClock.now >= deadline {
                Issue.record("\(url) never gave the expected answer; last: \(response.status) \(response.body)")
                return response
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The value of the sample `series` (name with its labels, as printed) in Prometheus text.
    static func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
