import AlertHTTP
import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `run` following several sources that version 3 rule files define (rules v3 §2): the built
/// binary against embedded exchanges on 127.0.0.1, two sources of the same type at two
/// servers. Every wait is on a line, a request or a counter, with a generous timeout.
@Suite("end to end: several sources in one daemon", .programs)
struct MultiSourceDaemonTests {
    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-multi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A v3 rule file defining `sources` (name → REST base), with a rule on BTC that reminds
    /// every second while BTC is above 1: it keeps firing as long as BTC ticks come.
    static func rules(_ sources: [(name: String, endpoint: String)]) -> String {
        let defined = sources.map { #""\#($0.name)": {"type": "btse", "endpoint": "\#($0.endpoint)"}"# }
        return """
            {"version": 3,
             "sources": {\(defined.joined(separator: ", "))},
             "sinks": {"out": {"type": "stdout", "format": "json"}},
             "defaults": {"notify": ["out"]},
             "rules": [
               {"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"}}
             ]}
            """
    }

    func exchange() async throws -> (DemoExchangeServer, String) {
        let server = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(100))))
        let port = try await server.start()
        return (server, "http://127.0.0.1:\(port)")
    }

    func get(_ url: String) async throws -> (status: Int, body: String) {
        let response = try await CurlHTTPClient.shared.send(HTTPRequest(url: url, timeout: 60_000))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Asks `url` until `done` holds (each answer waits on the daemon; 60 s at most).
    func poll(
        _ url: String, until done: ((status: Int, body: String)) -> Bool
    ) async throws -> (
        status: Int, body: String
    ) {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let response = try await get(url)
            if done(response) { return response }
            if ContinuousClock.now > deadline { throw PollTimedOut(url: url, last: response.body) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits until `done` holds (a server's counter), 60 s at most.
    func waitUntil(_ what: String, _ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !done() {
            if ContinuousClock.now > deadline { throw PollTimedOut(url: what, last: "") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    struct PollTimedOut: Error, CustomStringConvertible {
        var url: String
        var last: String
        var description: String { "\(url) never answered as expected; last: \(last)" }
    }

    /// One exchange goes silent: its feed goes stale (`@feed-stale` with `"source"`, symbol its
    /// name upper-cased) and `/healthz` names it, while the other's ticks keep firing the rule.
    @Test func aStalledSourceDoesNotHoldUpTheOther() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (alpha, alphaURL) = try await exchange()
        let (beta, betaURL) = try await exchange()
        defer {
            Task {
                await alpha.stop()
                await beta.stop()
            }
        }
        try Self.rules([("alpha", alphaURL), ("beta", betaURL)])
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--stale-after", "3s", "--listen", "127.0.0.1:0"], in: dir)
        let base = try await daemon.statusBase()
        _ = try await daemon.waitForStderrLine(containing: "alpha: connected to ws://127.0.0.1", timeout: 60)
        _ = try await daemon.waitForStderrLine(containing: "beta: connected to ws://127.0.0.1", timeout: 60)
        // Each source's BTC is a pair of its own: both fire.
        let alphas = #""rule":"btc","source":"alpha""#
        let betas = #""rule":"btc","source":"beta""#
        _ = try await daemon.waitForStdoutLine(containing: alphas, timeout: 60)
        _ = try await daemon.waitForStdoutLine(containing: betas, timeout: 60)
        let healthy = try await poll("\(base)/healthz") { $0.status == 200 }
        #expect(healthy.body == "ok\nalpha: ok\nbeta: ok\n")

        alpha.setFaults(ExchangeFaults(silenceAfter: .zero, silenceFor: .seconds(3600)))
        let stale = try await daemon.waitForStdoutLine(containing: #""rule":"@feed-stale""#, timeout: 60)
        #expect(stale.contains(#""rule":"@feed-stale","source":"alpha","symbol":"ALPHA""#))
        // alpha sends nothing from here on: the rule keeps firing on beta's ticks alone.
        func count(_ text: String) -> Int { daemon.stdout.components(separatedBy: text).count - 1 }
        let (alphaBefore, betaBefore) = (count(alphas), count(betas))
        #expect(alphaBefore >= 1)
        try await daemon.occurrences(.stdout, of: betas, atLeast: betaBefore + 3, timeout: 60)
        #expect(count(alphas) == alphaBefore)
        let health = try await poll("\(base)/healthz") { $0.status == 503 && $0.body.contains("alpha: stale") }
        #expect(health.body.contains("\nbeta: ok\n"))
        #expect(health.body.hasPrefix("1 of 2 sources unhealthy: alpha: stale: no prices for "))
        let metrics = try await get("\(base)/metrics")
        #expect(metrics.body.contains(#"pricealert_feed_stale{source="alpha"} 1.0"#))
        #expect(metrics.body.contains(#"pricealert_feed_stale{source="beta"} 0.0"#))
        #expect(try await daemon.stop(signal: SIGTERM) == 0)
    }

    /// One source's server accepts connections and never answers (its market list hangs): the
    /// other source's ticks fire the rule, and `/healthz` says which source is not there.
    @Test func aSourceThatNeverAnswersDoesNotHoldUpTheOther() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let silent = try SilentListener()
        defer { silent.close() }
        let (beta, betaURL) = try await exchange()
        defer { Task { await beta.stop() } }
        try Self.rules([("alpha", "http://127.0.0.1:\(silent.port)"), ("beta", betaURL)])
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--listen", "127.0.0.1:0"], in: dir)
        let base = try await daemon.statusBase()
        try await daemon.occurrences(.stdout, of: #""rule":"btc""#, atLeast: 3, timeout: 60)
        let health = try await get("\(base)/healthz")
        #expect(health.status == 503)
        #expect(health.body.contains("\nalpha: starting: loading the market list\n"))
        #expect(health.body.contains("\nbeta: ok\n"))
        #expect(try await daemon.stop(signal: SIGTERM) == 0)
    }

    /// SIGHUP re-reads the rule files: a source they no longer define stops (its server sees
    /// its connection close), one they add starts, and one that did not change keeps the
    /// connection it had.
    @Test func sighupAddsAndRemovesSourcesAndKeepsTheOthersConnected() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (alpha, alphaURL) = try await exchange()
        let (beta, betaURL) = try await exchange()
        let (gamma, gammaURL) = try await exchange()
        defer {
            Task {
                await alpha.stop()
                await beta.stop()
                await gamma.stop()
            }
        }
        let file = dir.appendingPathComponent("rules.json")
        try Self.rules([("alpha", alphaURL), ("beta", betaURL)]).write(to: file, atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--listen", "127.0.0.1:0"], in: dir)
        let base = try await daemon.statusBase()
        _ = try await daemon.waitForStderrLine(containing: "alpha: connected to ws://127.0.0.1", timeout: 60)
        _ = try await daemon.waitForStderrLine(containing: "beta: connected to ws://127.0.0.1", timeout: 60)
        // The servers count a connection when their handler starts, which on busy cores can come
        // after the daemon has logged the connection.
        try await waitUntil("alpha's connection counted") { alpha.stats.connectionsAccepted >= 1 }
        try await waitUntil("beta's connection counted") { beta.stats.connectionsOpen >= 1 }
        #expect(alpha.stats.connectionsAccepted == 1)
        #expect(beta.stats.connectionsOpen == 1)

        try Self.rules([("alpha", alphaURL), ("gamma", gammaURL)]).write(to: file, atomically: true, encoding: .utf8)
        kill(daemon.pid, SIGHUP)
        _ = try await daemon.waitForStderrLine(containing: "source 'beta' removed from the rule files", timeout: 60)
        _ = try await daemon.waitForStderrLine(containing: "gamma: connected to ws://127.0.0.1", timeout: 60)
        #expect(daemon.stderr.contains("gamma: 227 markets, 1 rules"))
        let health = try await poll("\(base)/healthz") { $0.status == 200 }
        #expect(health.body == "ok\nalpha: ok\ngamma: ok\n")
        // beta's server sees its connection end; alpha's never saw a second one.
        try await waitUntil("beta's connection closed") { beta.stats.connectionsOpen == 0 }
        #expect(alpha.stats.connectionsAccepted == 1)
        #expect(alpha.stats.connectionsOpen == 1)
        try await waitUntil("gamma's connection counted") { gamma.stats.connectionsAccepted >= 1 }
        #expect(gamma.stats.connectionsAccepted == 1)
        let metrics = try await get("\(base)/metrics")
        #expect(metrics.body.contains(#"pricealert_feed_connected{source="gamma"} 1.0"#))
        #expect(metrics.body.contains(#"pricealert_feed_connected{source="beta"} 0.0"#))
        #expect(try await daemon.stop(signal: SIGTERM) == 0)
    }

    /// `check` without `--ticks` takes one REST snapshot of each source the rule files define;
    /// one that cannot be reached is named and makes the exit 69, and the other's prices are
    /// still evaluated and delivered.
    @Test func checkTakesASnapshotOfEachSourceAndGoesOnWithoutOneThatIsDown() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (alpha, alphaURL) = try await exchange()
        let (beta, betaURL) = try await exchange()
        try Self.rules([("alpha", alphaURL), ("beta", betaURL)])
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let both = try await PriceAlertBinary.run(["check", "--rules", "rules.json", "--state", "st"], in: dir)
        #expect(both.status == 0, "\(both.stderr)")
        #expect(both.stdout.contains(#""rule":"btc""#))
        #expect(alpha.requestLog.contains { $0.contains("/spot/api/v3.2/market_summary") })
        #expect(beta.requestLog.contains { $0.contains("/spot/api/v3.2/market_summary") })

        // alpha is gone (its port closed): beta's prices are still checked.
        await alpha.stop()
        try Self.rules([("alpha", alphaURL), ("beta", betaURL)])
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let again = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--state", "fresh"], in: dir)
        await beta.stop()
        #expect(again.status == 69)
        #expect(again.stderr.contains("pricealert: error: alpha: "))
        #expect(again.stdout.contains(#""rule":"btc""#))
    }

    /// `run` with neither `--source` nor a source in the rule files has nothing to follow.
    @Test func runWithoutAnySourceIsAUsageError() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"version": 1, "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let result = try await PriceAlertBinary.run(["run", "--rules", "rules.json"], in: dir)
        #expect(result.status == 64)
        #expect(
            result.stderr.contains("no prices to follow: give --source, or define sources in a version 3 rule file"))
    }
}
