import AlertTestSupport
import DemoExchange
import Foundation
import GRDB
import SeededRandom
import Testing

/// `pricealert check` as cron runs it: the built binary, a state folder kept between runs.
@Suite("end to end: check", .programs)
struct CheckCommandTests {
    /// Every condition kind, cooldowns, `once`, hysteresis, change windows (with and without the
    /// source's 24 h figure) and `match` rules; alerts go to a file sink so stdout is the listing.
    static let rules = """
        {"version": 1,
         "sinks": {"journal": {"type": "file", "path": "journal.jsonl"}},
         "defaults": {"notify": ["journal"]},
         "rules": [
           {"id": "a-above", "symbol": "AAA", "when": {"price": {"above": 101}}, "hysteresis": 0.5},
           {"id": "a-below", "symbols": ["AAA", "BBB"], "when": {"price": {"below": 99}}, "cooldown": "2m"},
           {"id": "b-up", "symbol": "BBB", "when": {"price": {"crossesAbove": 100.5}}},
           {"id": "b-down", "symbol": "bbb", "when": {"price": {"crossesBelow": 99.5}}, "cooldown": "30s"},
           {"id": "c-in", "symbol": "CCC", "when": {"price": {"inside": [99.8, 100.2]}}},
           {"id": "c-out", "symbol": "CCC", "when": {"price": {"outside": [98, 102]}}, "repeat": "once"},
           {"id": "move-1m", "symbols": ["AAA", "CCC"], "when": {"change": {"window": "1m", "above": 0.4}}},
           {"id": "move-5m", "symbol": "BBB", "when": {"change": {"window": "5m", "below": -0.8}}, "hysteresis": 0.2},
           {"id": "day", "symbols": ["AAA", "BBB", "CCC"], "when": {"change": {"window": "24h", "above": 1.5}}, "cooldown": "10m"},
           {"id": "usd-spot", "match": {"quote": "USD", "future": false}, "when": {"price": {"above": 100.8}}, "cooldown": "1m"}
         ]}
        """

    static let markets = """
        {"code": 1, "data": [
         {"symbol": "AAA", "baseCurrency": "AAA", "quoteCurrency": "USD", "future": false, "active": true},
         {"symbol": "CCC", "baseCurrency": "CCC", "quoteCurrency": "EUR", "future": false, "active": true}]}
        """

    /// A seeded random walk over three symbols for about `count / 3` seconds of stream time,
    /// AAA with the source's 24 h figure, BBB sometimes, CCC never.
    static func stream(seed: UInt64, count: Int) -> [String] {
        var rng = SeededRandom(seed: seed)
        var price = [100.0, 100.0, 100.0]
        var daily = [0.0, 0.5, -0.5]
        var time: Int64 = 1_700_000_000_000
        return (0..<count).map { _ in
            let s = Int.random(in: 0..<3, using: &rng)
            let step = Double.random(in: -0.003...0.003, using: &rng)
            price[s] *= 1 + step
            daily[s] += step * 100
            time += Int64.random(in: 0...2_000, using: &rng)
            let symbol = ["AAA", "BBB", "CCC"][s]
            let change = s == 0 || (s == 1 && Bool.random(using: &rng)) ? ", \"change24h\": \(daily[s])" : ""
            return "{\"time\": \(time), \"symbol\": \"\(symbol)\", \"price\": \(price[s])\(change)}"
        }
    }

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try Self.markets.write(to: dir.appendingPathComponent("markets.json"), atomically: true, encoding: .utf8)
        return dir
    }

    /// The key property: checks over consecutive pieces give exactly what one replay gives.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func checksOverPiecesEqualOneReplay(seed: UInt64) async throws {
        try await Self.piecesEqualReplay(Self.stream(seed: seed, count: 1_500), seed: seed, minimumRules: 8)
    }

    /// The same over about three days with gaps of hours: each check reads only the hours of
    /// minute history its ticks can look up, so the 1 m, 5 m and 24 h windows must find their
    /// base prices in hours read by earlier runs and left on disk.
    @Test(arguments: [21, 22] as [UInt64])
    func checksOverDaysWithGapsEqualOneReplay(seed: UInt64) async throws {
        try await Self.piecesEqualReplay(Self.days(seed: seed, count: 2_400), seed: seed, minimumRules: 6)
    }

    /// A random walk with a tick every 20 s to 3 min and now and then a gap of 1 to 20 hours.
    static func days(seed: UInt64, count: Int) -> [String] {
        var rng = SeededRandom(seed: seed)
        var price = [100.0, 100.0, 100.0]
        var time: Int64 = 1_700_000_000_000
        return (0..<count).map { _ in
            if Int.random(in: 0..<150, using: &rng) == 0 { time += Int64.random(in: 1...20, using: &rng) * 3_600_000 }
            time += Int64.random(in: 20_000...180_000, using: &rng)
            let s = Int.random(in: 0..<3, using: &rng)
            price[s] *= 1 + Double.random(in: -0.006...0.006, using: &rng)
            return "{\"time\": \(time), \"symbol\": \"\(["AAA", "BBB", "CCC"][s])\", \"price\": \(price[s])}"
        }
    }

    /// Replays `lines` once, then checks them in ten random pieces with one state folder, and
    /// expects the same alerts on stdout and in the file sink.
    static func piecesEqualReplay(_ lines: [String], seed: UInt64, minimumRules: Int) async throws {
        let dir = try CheckCommandTests().folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("all.jsonl"), atomically: true, encoding: .utf8)
        let replay = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "all.jsonl",
                "--markets", "markets.json", "--format", "json"
            ], in: dir)
        #expect(replay.status == 0)
        let expected = replay.stdout.split(separator: "\n")
        #expect(expected.count > 40)
        let rules = Set(
            expected.compactMap { $0.split(separator: "\"rule\":\"").dropFirst().first?.split(separator: "\"").first })
        #expect(rules.count >= minimumRules, "the stream should make most rules fire: \(rules.sorted())")

        var rng = SeededRandom(seed: seed * 7)
        let cuts = ((0..<9).map { _ in Int.random(in: 1..<lines.count, using: &rng) } + [lines.count]).sorted()
        var start = 0
        var listed: [Substring] = []
        for (i, end) in cuts.enumerated() {
            let piece = "piece\(i).jsonl"
            try (lines[start..<end].joined(separator: "\n") + "\n").write(
                to: dir.appendingPathComponent(piece), atomically: true, encoding: .utf8)
            start = end
            // The market list is given once: later runs use the one the state folder saved.
            let markets = i == 0 ? ["--markets", "markets.json"] : []
            let check = try await PriceAlertBinary.run(
                [
                    "check", "--rules", "rules.json", "--ticks", piece, "--state", "st",
                    "--format", "json"
                ] + markets, in: dir)
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stderr.isEmpty, "check is quiet when all is well")
            listed += check.stdout.split(separator: "\n")
        }
        #expect(listed == expected)
        // The sinks got the same alerts.
        let journal = try String(contentsOf: dir.appendingPathComponent("journal.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n") == expected)
    }

    @Test func exitCodeSaysWhetherAlertsFired() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 100}\n".write(
            to: dir.appendingPathComponent("calm.jsonl"), atomically: true, encoding: .utf8)
        try "{\"time\": 2000, \"symbol\": \"AAA\", \"price\": 102}\n".write(
            to: dir.appendingPathComponent("up.jsonl"), atomically: true, encoding: .utf8)
        let calm = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "calm.jsonl", "--state", "st", "--exit-code",
                "--markets", "markets.json"
            ], in: dir)
        #expect(calm.status == 0)
        #expect(calm.stdout.isEmpty && calm.stderr.isEmpty)
        let up = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", "up.jsonl", "--state", "st", "--exit-code"], in: dir)
        #expect(up.status == 1)
        #expect(up.stdout.isEmpty, "without --format only the rules' sinks get the alert")
        let journal = try String(contentsOf: dir.appendingPathComponent("journal.jsonl"), encoding: .utf8)
        #expect(journal.contains("\"id\":\"a-above:AAA:2000\""))
        // The same snapshot again: the pair is disarmed, nothing fires, 0 without --exit-code too.
        try "{\"time\": 3000, \"symbol\": \"AAA\", \"price\": 102.5}\n".write(
            to: dir.appendingPathComponent("up2.jsonl"), atomically: true, encoding: .utf8)
        let again = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", "up2.jsonl", "--state", "st", "--exit-code"], in: dir)
        #expect(again.status == 0)
    }

    /// `text` as the file `name` in `dir`.
    func put(_ text: String, as name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// `pricealert check --rules RULES --ticks TICKS --state st` and `more`, in `dir`.
    func check(
        _ rules: String, _ ticks: String, in dir: URL, _ more: [String] = []
    ) async throws -> PriceAlertBinary.Result {
        try await PriceAlertBinary.run(["check", "--rules", rules, "--ticks", ticks, "--state", "st"] + more, in: dir)
    }

    /// A rule file with an error: exit 65 with its place, nothing evaluated. On a first run no
    /// state folder is made for it; on a later one the folder (opened while the rules were read)
    /// is closed again, so the next run can use it.
    @Test func aBrokenRuleFileLeavesTheStateFolderAsItWas() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try put("{\"version\": 1, \"rules\": [{\"id\": \"x\"}]}", as: "broken.json", in: dir)
        try put("{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 100}\n", as: "t.jsonl", in: dir)
        let first = try await check("broken.json", "t.jsonl", in: dir)
        #expect(first.status == 65)
        #expect(first.stderr.contains("broken.json:1:"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("st").path))

        #expect(try await check("rules.json", "t.jsonl", in: dir).status == 0)
        let again = try await check("broken.json", "t.jsonl", in: dir)
        #expect(again.status == 65)
        #expect(!again.stderr.contains("in use"))
        try put("{\"time\": 2000, \"symbol\": \"AAA\", \"price\": 102}\n", as: "up.jsonl", in: dir)
        #expect(try await check("rules.json", "up.jsonl", in: dir, ["--exit-code"]).status == 1)
    }

    /// A webhook that cannot be reached: the alert waits in the outbox for the next run, and
    /// the run says so and exits 74 (also with --exit-code, which would say 1).
    @Test func undeliveredAlertsExit74AndWaitInTheOutbox() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try put(
            """
            {"version": 1, "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:1/hook"}},
             "rules": [{"id": "up", "symbol": "AAA", "when": {"price": {"above": 101}}, "notify": ["ops"]}]}
            """, as: "hook.json", in: dir)
        try put("{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 102}\n", as: "up.jsonl", in: dir)
        let run = try await check("hook.json", "up.jsonl", in: dir, ["--exit-code", "--drain-timeout", "1s"])
        #expect(run.status == 74)
        #expect(run.stderr.contains("check: 1 deliveries failed or wait in the outbox"))
        let waiting = try await DatabaseQueue(path: dir.appendingPathComponent("st/pricealert.sqlite").path).read {
            db in
            try String.fetchAll(db, sql: "SELECT delivery_id FROM outbox")
        }
        #expect(waiting == ["up:AAA:1000"])
    }

    /// Two overlapping runs: the second finds the folder locked, says so, evaluates nothing and
    /// exits 75; the first then completes.
    @Test func overlappingChecksNeverBothEvaluate() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("slow.jsonl").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try "{\"time\": 2000, \"symbol\": \"AAA\", \"price\": 102}\n".write(
            to: dir.appendingPathComponent("up.jsonl"), atomically: true, encoding: .utf8)
        // The first check holds the lock while it waits for its input.
        let first = try PriceAlertBinary.start(
            [
                "check", "--rules", "rules.json", "--ticks", "slow.jsonl", "--state", "st",
                "--format", "json"
            ], in: dir)
        let lock = dir.appendingPathComponent("st/pricealert.lock").path
        let pid = "\(first.process.processIdentifier)"
        var looks = 0
        while (try? String(contentsOfFile: lock, encoding: .utf8))?.hasPrefix(pid) != true, looks < 3_000 {
            looks += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        let second = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "up.jsonl", "--state", "st",
                "--format", "json"
            ], in: dir)
        #expect(second.status == 75)
        #expect(second.stdout.isEmpty)
        #expect(second.stderr.contains("is in use by another pricealert (pid \(pid))"))

        // Only once the first check has opened its input for reading: a FIFO's data is dropped
        // when its last writer closes it before a reader opened it, and the first check would
        // then wait for a writer for good.
        var writer: Int32 = -1
        for _ in 0..<3_000 {
            writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 || errno != ENXIO { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(writer >= 0)
        let line = "{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 101.5}\n"
        _ = line.withCString { write(writer, $0, strlen($0)) }
        close(writer)
        let done = try await first.wait(timeout: 30)
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.contains("\"id\":\"a-above:AAA:1000\""))
        // Nothing of the refused run reached the sinks or the state.
        let journal = try String(contentsOf: dir.appendingPathComponent("journal.jsonl"), encoding: .utf8)
        #expect(!journal.contains("2000"))
    }

    /// A damaged state row stops the run with the folder and the symbol named, before anything
    /// is evaluated or dispatched.
    @Test func damagedStateIsAnErrorNamingIt() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 100}\n".write(
            to: dir.appendingPathComponent("t.jsonl"), atomically: true, encoding: .utf8)
        let first = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", "t.jsonl", "--state", "st"], in: dir)
        #expect(first.status == 0)
        let database = dir.appendingPathComponent("st/pricealert.sqlite").path
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in try db.execute(sql: "UPDATE symbol_state SET snapshot = x'01'") }
        try "{\"time\": 2000, \"symbol\": \"AAA\", \"price\": 102}\n".write(
            to: dir.appendingPathComponent("up.jsonl"), atomically: true, encoding: .utf8)
        let second = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", "up.jsonl", "--state", "st"], in: dir)
        #expect(second.status == 73)
        #expect(second.stderr.contains("error: state folder st: saved state of AAA cannot be read"))
        // The file sink was opened (it is created empty at start), but nothing reached it.
        let journal = try String(contentsOf: dir.appendingPathComponent("journal.jsonl"), encoding: .utf8)
        #expect(journal.isEmpty)
    }

    @Test func badLinesAndDroppedTicksAreReportedAndTheRestEvaluated() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        {"time": 5000, "symbol": "AAA", "price": 100}
        not json
        {"time": 4000, "symbol": "AAA", "price": 103}
        {"time": 6000, "symbol": "AAA", "price": 102}

        """.write(to: dir.appendingPathComponent("t.jsonl"), atomically: true, encoding: .utf8)
        let run = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "t.jsonl", "--state", "st",
                "--format", "json"
            ], in: dir)
        #expect(run.status == 0)
        #expect(run.stderr.contains("t.jsonl:2: error:"))
        #expect(run.stderr.contains("t.jsonl:3: dropped: time is earlier"))
        #expect(run.stderr.contains("check: 4 ticks read, 2 dropped (1 malformed, 1 out-of-order), 1 alert"))
        #expect(run.stdout.contains("a-above:AAA:6000"))
    }

    @Test func aSourceSnapshotIsEvaluatedAndItsMarketListSaved() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rules = """
            {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
             "rules": [{"id": "spot", "match": {"quote": "USD", "future": false}, "when": {"price": {"above": 0}}},
                       {"id": "btc", "symbol": "BTC", "when": {"price": {"above": 0}}, "repeat": "once"}]}
            """
        try rules.write(to: dir.appendingPathComponent("live.json"), atomically: true, encoding: .utf8)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 5, interval: .seconds(1))))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        let args = [
            "check", "--rules", "live.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)", "--state",
            "st"
        ]
        let first = try await PriceAlertBinary.run(args, in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("\"rule\":\"btc\""))
        #expect(first.stdout.contains("\"rule\":\"spot\",\"symbol\":\"BTC\""))
        // Second run: every pair is disarmed (price still above 0) and `once` is spent.
        let second = try await PriceAlertBinary.run(args, in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        await exchange.stop()
        // The exchange is gone: the saved market list is used, the snapshot cannot be had: 69.
        let third = try await PriceAlertBinary.run(args, in: dir)
        #expect(third.status == 69)
        #expect(third.stderr.contains("127.0.0.1:\(port)"))
    }
}
