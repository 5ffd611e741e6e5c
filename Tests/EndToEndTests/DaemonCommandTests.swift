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
                ["run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                 "--drain-timeout", "5s"],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "400000"])
            let ready = try await socket.waitFor(line: "READY=1", timeout: 30)
            #expect(socket.messages[ready].contains("STATUS=following btse at ws://127.0.0.1:\(port)"))
            // Nothing before READY=1 but status lines: the watchdog starts with readiness.
            #expect(socket.messages[..<ready].allSatisfy { !$0.contains("WATCHDOG=1") })
            let ping = try await socket.waitFor(line: "WATCHDOG=1", after: ready, timeout: 5)
            _ = try await socket.waitFor(line: "WATCHDOG=1", after: ping, timeout: 5)
            // The first alert, before SIGTERM: on a loaded machine two pings can come before it.
            _ = try await daemon.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 20)
            kill(daemon.process.processIdentifier, SIGTERM)
            let stopping = try await socket.waitFor(line: "STOPPING=1", after: ping, timeout: 20)
            #expect(socket.messages[stopping].contains("STATUS=stopping"))
            return try await daemon.wait(timeout: 30, arguments: [])
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
                ["run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                 "--listen", "127.0.0.1:0", "--stale-after", "1500ms"],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "300000"])
            let line = try await daemon.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 30)
            let listen = try #require(line.components(separatedBy: "listening on http://127.0.0.1:").last)
            let base = "http://127.0.0.1:\(try #require(Int(listen.prefix { $0.isNumber })))"
            _ = try await socket.waitFor(line: "READY=1", timeout: 30)

            // Prices flow: healthy, and the counters say what happened.
            let metrics = try await poll("\(base)/metrics", draining: socket) {
                (Self.sample($0.body, "pricealert_ticks_total") ?? 0) > 0
                    && (Self.sample($0.body, #"pricealert_dropped_total{reason="malformed"}"#) ?? 0) > 0  // every 5th frame
            }
            #expect(try await get("\(base)/healthz") == Response(status: 200, body: "ok\n"))
            #expect(Self.sample(metrics.body, "pricealert_feed_connected") == 1)
            #expect(Self.sample(metrics.body, "pricealert_feed_stale") == 0)
            #expect((Self.sample(metrics.body, #"pricealert_alerts_total{rule="btc-listed"}"#) ?? 0) >= 1)
            #expect((Self.sample(metrics.body, #"pricealert_deliveries_total{sink="out",outcome="delivered"}"#) ?? 0) >= 1)
            #expect(Self.sample(metrics.body, "pricealert_outbox_depth") == 0)
            #expect(Self.sample(metrics.body, "pricealert_feed_reconnects_total") == 0)
            #expect((Self.sample(metrics.body, "pricealert_seconds_since_last_tick") ?? 99) < 1.5)
            #expect(metrics.body.contains("# TYPE pricealert_alerts_total counter"))

            // The exchange goes silent: /healthz fails with the reason, the watchdog stops.
            exchange.setFaults(ExchangeFaults(silenceAfter: .zero, silenceFor: .seconds(3600)))
            let silent = try await poll("\(base)/metrics", draining: socket) { Self.sample($0.body, "pricealert_feed_stale") == 1 }
            let stale = try await get("\(base)/healthz")
            #expect(stale.status == 503)
            #expect(stale.body.hasPrefix("stale: no prices for "))
            #expect((Self.sample(silent.body, "pricealert_seconds_since_last_tick") ?? 0) >= 1.5)
            #expect((Self.sample(silent.body, #"pricealert_alerts_total{rule="@feed-stale"}"#) ?? 0) == 1)
            let pingsBefore = socket.receive().count { $0 == "WATCHDOG=1" }
            for _ in 0..<10 {  // over six watchdog periods
                try await Task.sleep(for: .milliseconds(100))
                _ = socket.receive()
            }
            #expect(socket.receive().count { $0 == "WATCHDOG=1" } == pingsBefore)

            // Prices again: healthy again.
            exchange.setFaults(ExchangeFaults())
            _ = try await poll("\(base)/healthz", draining: socket) { $0.status == 200 }
            let back = try await socket.waitFor(line: "WATCHDOG=1", after: socket.messages.count - 1, timeout: 10)
            #expect(back > 0)
            kill(daemon.process.processIdentifier, SIGTERM)
            return try await daemon.wait(timeout: 30, arguments: [])
        }
        #expect(result.status == 0)
        #expect(result.stderr.contains("run: "))
    }

    @Test func demoIsTheSameDaemon() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = try NotifySocket(abstract: true)
        let demo = try PriceAlertBinary.start(["demo", "--interval", "200ms", "--listen", "127.0.0.1:0"], in: dir,
                                              environment: ["NOTIFY_SOCKET": socket.address])
        let line = try await demo.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 30)
        let listen = try #require(line.components(separatedBy: "listening on http://127.0.0.1:").last)
        let base = "http://127.0.0.1:\(try #require(Int(listen.prefix { $0.isNumber })))"
        _ = try await socket.waitFor(line: "READY=1", timeout: 30)
        #expect(try await poll("\(base)/healthz", draining: socket) { $0.status == 200 }.body == "ok\n")
        #expect(try await demo.stop(signal: SIGTERM) == 0)
        _ = try await socket.waitFor(line: "STOPPING=1", timeout: 5)
    }

    /// `run` notifying a webhook (through the outbox) held by `hook`; SIGTERM as soon as the
    /// first delivery is in flight. Returns how `run` ended.
    func sigtermWithDeliveryInFlight(hook: CrashRecoveryTests.Hook, drainTimeout: String) async throws -> PriceAlertBinary.Result {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        return try await withExchange { exchangePort in
            try await LoopbackServer.with(hook.router()) { hookPort in
                try """
                    {"version": 1,
                     "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(hookPort)/hook", "timeout": "30s"}},
                     "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["ops"]}]}
                    """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                let daemon = try PriceAlertBinary.start(
                    ["run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(exchangePort)",
                     "--state", "state", "--drain-timeout", drainTimeout], in: dir)
                let deadline = ContinuousClock.now + .seconds(30)
                while hook.attempts.withLock({ $0 }) < 1, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(hook.attempts.withLock { $0 } == 1)
                kill(daemon.process.processIdentifier, SIGTERM)
                return try await daemon.wait(timeout: 8, arguments: ["run"])
            }
        }
    }

    @Test func sigtermDrainsTheDeliveryInFlightAndExitsZero() async throws {
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        hook.delay.withLock { $0 = .milliseconds(1500) }
        let result = try await sigtermWithDeliveryInFlight(hook: hook, drainTimeout: "10s")
        #expect(result.status == 0)
        #expect(hook.received.withLock { $0.count } == 1)  // answered after SIGTERM, and waited for
        #expect(!result.stderr.contains("wait in the outbox"))
    }

    @Test func sigtermWaitsNoLongerThanTheDrainTimeout() async throws {
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        hook.delay.withLock { $0 = .seconds(12) }  // longer than the default 10 s drain and the 8 s wait
        let result = try await sigtermWithDeliveryInFlight(hook: hook, drainTimeout: "1s")
        // The row is safe in the outbox for the next start: a SIGTERM stop is still exit 0.
        #expect(result.status == 0)
        #expect(result.stderr.contains("1 deliveries wait in the outbox"))
    }

    @Test func aListenAddressInUseExits69() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeRules(in: dir)
        let listener = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let ready = try await listener.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 20)
        let port = try #require(ready.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let result = try await PriceAlertBinary.run(["run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                                                     "http://127.0.0.1:9", "--listen", "127.0.0.1:\(port)"], in: dir)
        #expect(try await listener.stop(signal: SIGTERM) == 0)
        #expect(result.status == 69)
        #expect(result.stderr.contains("cannot listen on 127.0.0.1:\(port)"))
    }

    struct Response: Equatable {
        var status: Int
        var body: String
    }

    func get(_ url: String) async throws -> Response {
        let response = try await CurlHTTPClient.shared.send(HTTPRequest(url: url))
        return Response(status: response.status, body: String(decoding: response.body, as: UTF8.self))
    }

    /// GETs `url` every 100 ms until `done` holds (at most 15 s), and returns that response.
    /// Reads `socket` meanwhile, as systemd would: a datagram socket queues only a few messages.
    func poll(_ url: String, draining socket: NotifySocket, until done: (Response) -> Bool) async throws -> Response {
        let deadline = ContinuousClock.now + .seconds(15)
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
