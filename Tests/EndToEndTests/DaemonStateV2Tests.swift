import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `pricealert run` keeps version 2 state across a restart and a SIGHUP (Docs/rules.md, "How
/// version 2 is evaluated"): a reminder count, a `for` rule's start, a step move's level and a
/// portfolio rule's firing carry over; a rule edited in the file starts over, the others keep
/// theirs. The exchange sends only the frames the test scripts, one at a time, each once the
/// events of the one before are out.
@Suite("end to end: daemon state of version 2 rules", .programs)
struct DaemonStateV2Tests {
    /// `every` is the reminder rule's interval: the SIGHUP edits it. `for` and `every` are 1 ms:
    /// consecutive frames are further apart than that (`send` waits on output, checking every
    /// 50 ms), and a restart takes longer.
    static func rules(every: String) -> String {
        """
        {"version": 2,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "portfolios": {"pf": {"holdings": {"ADA": 1, "XRP": 1}, "cost": 2}},
         "rules": [
           {"id": "remind", "symbol": "BTC", "when": {"price": {"below": 50000}}, "repeat": {"every": "\(every)"}},
           {"id": "steps", "symbol": "ETH", "when": {"move": {"step": 100}}},
           {"id": "held", "symbol": "SOL", "when": {"price": {"above": 100}}, "for": "1ms"},
           {"id": "pf-down", "portfolio": "pf", "when": {"pnl": {"below": -10}}}
         ]}
        """
    }

    /// One frame: BTC, ETH, SOL, then the portfolio's ADA and XRP (worth 1.6 against a cost of 2).
    static func frame(eth: Double, sol: Double) -> [(symbol: String, price: Double)] {
        [("BTC", 40_000), ("ETH", eth), ("SOL", sol), ("ADA", 0.8), ("XRP", 0.8)]
    }

    /// Each event as `rule kind[ reminder] threshold`, in output order.
    static func events(_ stdout: String) throws -> [String] {
        try stdout.split(separator: "\n").map { line in
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            var text = "\(event["rule"] as? String ?? "?") \(event["kind"] as? String ?? "?")"
            if let reminder = event["reminder"] as? Int { text += " \(reminder)" }
            if let threshold = event["threshold"] as? Double { text += " \(threshold)" }
            return text
        }
    }

    struct TimedOut: Error, CustomStringConvertible {
        var description: String
    }

    /// Waits until `condition` holds, checking every 50 ms for up to 60 s.
    static func waitUntil(_ what: @autoclosure () -> String, _ condition: () -> Bool) async throws {
        for _ in 0..<1_200 {
            try await Task.sleep(for: .milliseconds(50))
            if condition() { return }
        }
        throw TimedOut(description: "timed out waiting for \(what())")
    }

    /// Sends `prices` as one frame and waits until `running` has written `total` events in all.
    static func send(
        _ prices: [(symbol: String, price: Double)], to exchange: DemoExchangeServer,
        _ running: PriceAlertBinary.Running, until total: Int
    ) async throws {
        exchange.send(prices: prices)
        try await waitUntil("\(total) events:\n\(running.stdout)\n\(running.stderr)") {
            running.stdout.split(separator: "\n").count >= total
        }
    }

    @Test("run: reminders, for, step moves and portfolios carry over a restart; SIGHUP resets only the edited rule")
    func versionTwoStateSurvivesARestartAndAReload() async throws {
        let dir = try LiveCommandTests().tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("rules.json")
        try Self.rules(every: "1ms").write(to: file, atomically: true, encoding: .utf8)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .replay(ticks: [], speed: 0)))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        let args = [
            "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)", "--state",
            "st"
        ]

        let first = try PriceAlertBinary.start(args, in: dir)
        try await Self.waitUntil("the first run's subscription") { exchange.stats.subscriptions >= 1 }
        // BTC below 50 000 fires; ETH sets the step level 10; SOL is not above 100; the
        // portfolio is down 20 %.
        try await Self.send(Self.frame(eth: 1_050, sol: 90), to: exchange, first, until: 2)
        // A reminder; ETH enters level 11; SOL starts holding above 100.
        try await Self.send(Self.frame(eth: 1_120, sol: 150), to: exchange, first, until: 4)
        #expect(try await first.stop(signal: SIGTERM) == 0, "\(first.stderr)")
        #expect(
            try Self.events(first.stdout) == [
                "remind alert 50000.0", "pf-down alert -10.0",
                "remind reminder 1 50000.0", "steps alert 1100.0"
            ])

        let second = try PriceAlertBinary.start(args, in: dir)
        try await Self.waitUntil("the second run's subscription") { exchange.stats.subscriptions >= 2 }
        // Reminder 2, not a new alert; ETH leaves level 11 downwards (a fresh pair would take
        // 1 090 as its first price and stay quiet); SOL has held since the last run, so `held`
        // fires; the portfolio, still down, stays fired.
        try await Self.send(Self.frame(eth: 1_090, sol: 150), to: exchange, second, until: 3)
        try await Self.send(Self.frame(eth: 1_090, sol: 150), to: exchange, second, until: 4)

        // The reminder rule edited: it starts over (an alert, not reminder 4); the others keep
        // their state: ETH leaves level 10 against the kept level, nothing else fires again.
        try Self.rules(every: "2ms").write(to: file, atomically: true, encoding: .utf8)
        kill(second.pid, SIGHUP)
        _ = try await second.waitForStderrLine(containing: "rules reloaded: 4 rules", timeout: 60)
        try await Self.send(Self.frame(eth: 985, sol: 150), to: exchange, second, until: 6)
        #expect(try await second.stop(signal: SIGTERM) == 0, "\(second.stderr)")
        #expect(second.stderr.contains("restored the saved state of"))
        #expect(
            try Self.events(second.stdout) == [
                "remind reminder 2 50000.0", "steps alert 1100.0", "held alert 100.0",
                "remind reminder 3 50000.0",
                "remind alert 50000.0", "steps alert 1000.0"
            ])
    }
}
