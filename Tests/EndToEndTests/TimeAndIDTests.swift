import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// Nothing lost when clocks misbehave or events share a millisecond (Docs/rules.md#ticks-from-the-future,
/// #the-alert-event), through the built binary: a tick from the year 9999 is refused by `check`
/// and `run`, state a clock ahead left behind is recovered, and every event of a pair in one
/// millisecond reaches the webhook under an id of its own.
@Suite("end to end: tick times and event ids", .programs)
struct TimeAndIDTests {
    /// 9999-12-31T23:59:59.000Z.
    static let year9999: Int64 = 253_402_300_799_000

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-time-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func write(_ text: String, _ name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// The `id` of each JSON line of `text`.
    static func ids(_ text: String) throws -> [String] {
        try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["id"] as? String)
        }
    }

    /// A receiver that records the `id` of every JSON event it is sent, in arrival order.
    final class Receiver: Sendable {
        let ids = Mutex<[String]>([])

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let id = try TimeAndIDTests.ids(String(buffer: body)).first ?? "?"
                self.ids.withLock { $0.append(id) }
                return Response(status: .ok)
            }
            return router
        }
    }

    // MARK: ids

    /// Alert, resolved, alert at one time, then resolved and alert again at that time in a
    /// second `check`: five events, five ids, all of them in the file and at the webhook, and
    /// the same ids as one `replay` of all the ticks.
    @Test func eventsOfOneMillisecondEachReachTheWebhookWithAnIDOfTheirOwn() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let receiver = Receiver()
        let t: Int64 = 1_700_000_000_000
        let tick = { (p: Double) in #"{"time": \#(t), "symbol": "BTC", "price": \#(p)}"# }
        try write([101, 99, 101].map(tick).joined(separator: "\n"), "one.jsonl", in: dir)
        try write([99, 101].map(tick).joined(separator: "\n"), "two.jsonl", in: dir)
        try write([101, 99, 101, 99, 101].map(tick).joined(separator: "\n"), "all.jsonl", in: dir)
        try await LoopbackServer.with(receiver.router()) { port in
            try write(
                """
                {"version": 2,
                 "sinks": {"journal": {"type": "file", "path": "journal.jsonl"},
                           "hook": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook"}},
                 "defaults": {"notify": ["journal", "hook"]},
                 "rules": [{"id": "btc-100", "symbol": "BTC", "when": {"price": {"above": 100}}, "resolve": true}]}
                """, "rules.json", in: dir)
            for piece in ["one.jsonl", "two.jsonl"] {
                let result = try await PriceAlertBinary.run(
                    [
                        "check", "--rules", "rules.json", "--ticks", piece,
                        "--state", "state"
                    ], in: dir)
                #expect(result.status == 0, "\(result.stderr)")
            }
        }
        let expected = [
            "btc-100:BTC:\(t)", "btc-100:BTC:\(t):resolved", "btc-100:BTC:\(t):2",
            "btc-100:BTC:\(t):resolved:2", "btc-100:BTC:\(t):3"
        ]
        let journal = try String(contentsOf: dir.appendingPathComponent("journal.jsonl"), encoding: .utf8)
        #expect(try Self.ids(journal) == expected)
        #expect(receiver.ids.withLock { $0 }.sorted() == expected.sorted())
        let replay = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "all.jsonl",
                "--format", "json"
            ], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(try Self.ids(replay.stdout) == expected)
    }

    // MARK: ticks from the future

    static let priceRule = """
        {"version": 1,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "rules": [{"id": "btc-cross", "symbol": "BTC_USDT", "when": {"price": {"crossesAbove": 100}}}]}
        """

    /// A Poloniex-shaped REST server whose `ticker24h` answers the next of `bodies` (the last one
    /// again once they run out).
    static func poloniex(_ bodies: [String]) -> Router<BasicRequestContext> {
        let served = Mutex(0)
        let router = Router()
        router.get("/markets/ticker24h") { _, _ -> Response in
            let i = served.withLock { n in
                defer { n += 1 }; return min(n, bodies.count - 1)
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: bodies[i])))
        }
        return router
    }

    static func ticker(_ price: Double, ts: Int64?) -> String {
        #"[{"symbol":"BTC_USDT","close":"\#(price)","dailyChange":"0.01""# + (ts.map { #","ts":\#($0)"# } ?? "") + "}]"
    }

    /// `check` twice against a source whose first answer is timed in the year 9999: the first
    /// run refuses that tick (named, counted, exit 0), so the second run's crossing fires.
    @Test func checkRefusesATickFromTheYear9999() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.priceRule, "rules.json", in: dir)
        let router = Self.poloniex([
            Self.ticker(90, ts: Self.year9999), Self.ticker(90, ts: nil), Self.ticker(150, ts: nil)
        ])
        let runs = try await LoopbackServer.with(router) { port in
            var runs: [PriceAlertBinary.Result] = []
            for _ in 0..<3 {
                runs.append(
                    try await PriceAlertBinary.run(
                        [
                            "check", "--rules", "rules.json", "--source", "poloniex",
                            "--endpoint", "http://127.0.0.1:\(port)", "--state", "state"
                        ], in: dir))
            }
            return runs
        }
        for run in runs { #expect(run.status == 0, "\(run.stderr)") }
        #expect(
            runs[0].stderr.contains(
                "poloniex: BTC_USDT: dropped: BTC_USDT at 9999-12-31T23:59:59.000Z: time is further ahead of the local clock than --max-tick-skew (ahead-of-clock)"
            ), "\(runs[0].stderr)")
        #expect(
            runs[0].stderr.contains("check: 1 ticks read, 1 dropped (1 ahead-of-clock), 0 alerts"), "\(runs[0].stderr)")
        #expect(runs[0].stdout.isEmpty)
        #expect(runs[1].stderr.isEmpty, "\(runs[1].stderr)")
        let fired = try Self.ids(runs[2].stdout)
        #expect(fired.count == 1 && fired[0].hasPrefix("btc-cross:BTC_USDT:"), "\(runs[2].stdout)\(runs[2].stderr)")
        #expect(!fired.joined().contains(String(Self.year9999)))
    }

    /// State left by a run whose clock was a day ahead (here: a tick file timed a day from now,
    /// which is what ticks timed on arrival by such a clock look like): the next `check` of the
    /// source takes those times as not seen, says so, and its crossing fires.
    @Test func stateFromAClockADayAheadIsRecoveredWithoutDeletingIt() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.priceRule, "rules.json", in: dir)
        let ahead = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
        try write(#"{"time": \#(ahead), "symbol": "BTC_USDT", "price": 90}"#, "ahead.jsonl", in: dir)
        let poisoning = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "ahead.jsonl",
                "--state", "state"
            ], in: dir)
        #expect(poisoning.status == 0, "\(poisoning.stderr)")
        let router = Self.poloniex([Self.ticker(150, ts: nil)])
        let next = try await LoopbackServer.with(router) { port in
            try await PriceAlertBinary.run(
                [
                    "check", "--rules", "rules.json", "--source", "poloniex",
                    "--endpoint", "http://127.0.0.1:\(port)", "--state", "state"
                ], in: dir)
        }
        #expect(next.status == 0, "\(next.stderr)")
        #expect(
            next.stderr.contains("pricealert: warning: the state of 1 symbol (BTC_USDT) holds times up to "),
            "\(next.stderr)")
        #expect(
            next.stderr.contains("those times are taken as not seen, so later ticks are not out of order"),
            "\(next.stderr)")
        #expect(!next.stderr.contains("out-of-order"), "\(next.stderr)")
        // `prev` (90) was kept: 90 → 150 is the crossing.
        let fired = try Self.ids(next.stdout)
        #expect(fired.count == 1 && fired[0].hasPrefix("btc-cross:BTC_USDT:"), "\(next.stdout)")
    }

    /// `run` following a Poloniex-shaped websocket whose first frame is timed in the year 9999:
    /// the tick is refused with a warning naming the source, and the later frames' crossing
    /// fires (the old behaviour: an alert dated 9999-12-31 and every later tick dropped).
    @Test func runRefusesAFrameFromTheYear9999() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.priceRule, "rules.json", in: dir)
        let frame = { (price: Double, ts: Int64?) in
            #"{"channel":"ticker","data":[{"symbol":"BTC_USDT","close":"\#(price)","dailyChange":"0.01""#
                + (ts.map { #","ts":\#($0)"# } ?? "") + "}]}"
        }
        let exchange = HostileExchange(
            websocket: .accept(.text([frame(250, Self.year9999), frame(90, nil), frame(150, nil)])))
        let port = try await exchange.start()
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "poloniex",
                "--endpoint", "http://127.0.0.1:\(port)", "--state", "state"
            ], in: dir)
        do {
            let warning = try await running.waitForStderrLine(containing: "ahead-of-clock", timeout: 60)
            #expect(
                warning.contains(
                    "poloniex: dropped: BTC_USDT at 9999-12-31T23:59:59.000Z: time is further ahead of the local clock than --max-tick-skew (ahead-of-clock)"
                ), "\(warning)")
            let alert = try await running.waitForStdoutLine(containing: "btc-cross", timeout: 60)
            #expect(!alert.contains("9999"), "\(alert)")
            #expect(alert.contains(#""price":150"#), "\(alert)")
        } catch {
            Issue.record("run's log ends with:\n\(running.stderr.suffix(4000))")
            _ = try? await running.stop(signal: SIGKILL)
            await exchange.stop()
            throw error
        }
        #expect(try await running.stop(signal: SIGTERM) == 0)
        await exchange.stop()
        #expect(running.stderr.contains("run: 2 ticks, 1 dropped, 1 alerts"), "\(running.stderr.suffix(2000))")
    }
}
