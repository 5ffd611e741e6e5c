import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `pricealert run` as a daemon keeps its state: a restart goes on where it stopped, SIGHUP
/// swaps rule files (keeping the state of unchanged rules) or keeps the running rules when a
/// file has errors, SIGTERM saves and exits 0.
@Suite("end to end: daemon state and reload", .programs)
struct DaemonStateTests {
    static func rules(_ extra: String = "") -> String {
        """
        {"version": 1,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "rules": [
           {"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}}\(extra)
         ]}
        """
    }

    func count(_ text: String, _ needle: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func aRestartGoesOnWhereTheLastRunStopped() async throws {
        let dir = try LiveCommandTests().tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules().write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try await LiveCommandTests().withExchange { port in
            let args = [
                "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                "--state", "st"
            ]
            let first = try PriceAlertBinary.start(args, in: dir)
            _ = try await first.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 60)
            #expect(try await first.stop(signal: SIGTERM) == 0)
            #expect(count(first.stdout, "\"rule\":\"btc-listed\"") == 1)

            // BTC is still above 1: the restored pair is disarmed, so nothing fires again.
            let second = try PriceAlertBinary.start(args, in: dir)
            _ = try await second.waitForStderrLine(containing: "restored the saved state of", timeout: 60)
            try await Task.sleep(for: .seconds(2))
            #expect(try await second.stop(signal: SIGTERM) == 0)
            #expect(second.stdout.isEmpty, "\(second.stdout)")

            // Without the state folder the same run fires again: the test can tell.
            let fresh = try PriceAlertBinary.start(Array(args.dropLast(2)), in: dir)
            _ = try await fresh.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 60)
            #expect(try await fresh.stop(signal: SIGTERM) == 0)
            #expect(count(fresh.stdout, "\"rule\":\"btc-listed\"") == 1)
        }
    }

    /// Runs `body` with a `run` daemon on `rules()` (and a state folder) against the exchange,
    /// once its first alert is out, and the rule file it reads.
    func withDaemon(_ body: (PriceAlertBinary.Running, URL) async throws -> Void) async throws {
        let dir = try LiveCommandTests().tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("rules.json")
        try Self.rules().write(to: file, atomically: true, encoding: .utf8)
        try await LiveCommandTests().withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)", "--state", "st"
                ], in: dir)
            _ = try await running.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 60)
            try await body(running, file)
        }
    }

    @Test func sighupSwapsGoodRulesAndKeepsTheRunningOnesOnErrors() async throws {
        try await withDaemon { running, file in
            // A broken file: every error with its place, the running rules stay.
            try Self.rules(#", {"id": "eth", "symbol": "ETH", "when": {"price": {"abov": 1}}}"#)
                .write(to: file, atomically: true, encoding: .utf8)
            kill(running.process.processIdentifier, SIGHUP)
            let error = try await running.waitForStderrLine(containing: "rules.json:", timeout: 60)
            #expect(error.contains("rules.json:5:126: error: unknown operator 'abov' (did you mean 'above'?)"))
            _ = try await running.waitForStderrLine(containing: "the running rules stay", timeout: 60)
            #expect(running.process.isRunning)

            // A good file: swapped; the unchanged rule keeps its state (no second alert), the new
            // one fires.
            try Self.rules(#", {"id": "eth-listed", "symbol": "ETH", "when": {"price": {"above": 1}}}"#)
                .write(to: file, atomically: true, encoding: .utf8)
            kill(running.process.processIdentifier, SIGHUP)
            _ = try await running.waitForStderrLine(containing: "rules reloaded: 2 rules", timeout: 60)
            _ = try await running.waitForStdoutLine(containing: "\"rule\":\"eth-listed\"", timeout: 60)
            #expect(try await running.stop(signal: SIGTERM) == 0)
            #expect(count(running.stdout, "\"rule\":\"btc-listed\"") == 1)
            #expect(count(running.stdout, "\"rule\":\"eth-listed\"") == 1)
        }
    }

    /// Rules that need a sink the daemon did not open at start cannot be swapped in.
    @Test func sighupWithANewSinkKeepsTheRunningRules() async throws {
        try await withDaemon { running, file in
            try Self.rules(#", {"id": "eth", "symbol": "ETH", "when": {"price": {"above": 1}}, "notify": ["stdout"]}"#)
                .write(to: file, atomically: true, encoding: .utf8)
            kill(running.process.processIdentifier, SIGHUP)
            _ = try await running.waitForStderrLine(containing: "sink 'stdout' is new or changed", timeout: 60)
            _ = try await running.waitForStderrLine(containing: "the running rules stay", timeout: 60)
            #expect(try await running.stop(signal: SIGTERM) == 0)
            #expect(!running.stdout.contains("\"rule\":\"eth\""))
        }
    }
}
