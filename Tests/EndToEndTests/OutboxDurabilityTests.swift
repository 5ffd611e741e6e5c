import AlertHTTP
import AlertTestSupport
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// The outbox when things go wrong, as cron and an operator meet it: the built binary, a real
/// SQLite file broken the ways disks and people break it (an insert refused like a full disk, a
/// dropped table, a damaged page, a file cut to 0 bytes), and a real webhook receiver on
/// 127.0.0.1 that fails a fixed share of requests. No alert is sent that is not on disk, no state
/// is saved past an alert that is not, and nothing transient makes a delivery give up early.
@Suite("end to end: outbox durability", .programs)
struct OutboxDurabilityTests {
    /// A webhook receiver that answers by the request's number `n` (from 1): `pattern[(n - 1) %
    /// pattern.count]` (a status), and records the `webhook-id` of every 2xx it sends.
    final class Hook: Sendable {
        let pattern: [Int]
        let requests = Mutex(0)
        let received = Mutex<[String]>([])

        init(pattern: [Int] = [200]) {
            self.pattern = pattern
        }

        var ids: [String] { received.withLock { $0 } }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                let n = self.requests.withLock { count in
                    count += 1
                    return count
                }
                let status = self.pattern[(n - 1) % self.pattern.count]
                if (200..<300).contains(status), let id = request.headers[HTTPField.Name("webhook-id")!] {
                    self.received.withLock { $0.append(id) }
                }
                return Response(status: .init(code: status))
            }
            return router
        }
    }

    /// A folder with `rules.json`: rule `up` (AAA above 101) notifies the webhook `ops`, whose URL
    /// is `$HOOK_URL`, retried quickly.
    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try put(
            """
            {"version": 1,
             "sinks": {"ops": {"type": "webhook", "urlEnv": "HOOK_URL", "timeout": "60s",
                               "retry": {"backoff": "20ms", "maxBackoff": "100ms"}}},
             "rules": [{"id": "up", "symbol": "AAA", "when": {"price": {"above": 101}}, "notify": ["ops"]}]}
            """, as: "rules.json", in: dir)
        try put("{\"time\": 1000, \"symbol\": \"AAA\", \"price\": 100}\n", as: "calm.jsonl", in: dir)
        try put("{\"time\": 2000, \"symbol\": \"AAA\", \"price\": 102}\n", as: "up.jsonl", in: dir)
        return dir
    }

    func put(_ text: String, as name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Runs `body` with a fresh `folder()` and `hook` serving on 127.0.0.1 (its port), then
    /// removes the folder.
    func withFolder(_ hook: Hook, _ body: @Sendable (URL, Int) async throws -> Void) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await LoopbackServer.with(hook.router()) { port in try await body(dir, port) }
    }

    /// `check` of `ticks` with the webhook unreachable: every alert waits in the outbox.
    func queue(_ ticks: String, in dir: URL) async throws -> PriceAlertBinary.Result {
        try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", ticks, "--state", "st", "--drain-timeout", "1s"],
            in: dir, environment: ["HOOK_URL": "http://127.0.0.1:1/hook"])
    }

    /// `pricealert check --rules rules.json --ticks TICKS --state st --format json` with
    /// `$HOOK_URL` at `port`, and a drain long enough for a busy machine (it ends once all is
    /// delivered).
    func check(_ ticks: String, in dir: URL, port: Int) async throws -> PriceAlertBinary.Result {
        try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", ticks, "--state", "st", "--format", "json",
                "--drain-timeout", "60s"
            ],
            in: dir, environment: ["HOOK_URL": "http://127.0.0.1:\(port)/hook"])
    }

    func database(_ dir: URL) -> String {
        dir.appendingPathComponent("st/pricealert.sqlite").path
    }

    /// The test's own connection to a state database that a running daemon may be writing: it
    /// waits for the daemon's transaction to end instead of failing with "database is locked".
    func openDatabase(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// An insert into the outbox refused (a trigger raising SQLite's "database or disk is full"):
    /// the alert is listed but not sent, the state is not saved, exit 73 naming the file; once
    /// the outbox takes writes again, the same prices fire the same alert, delivered once.
    @Test func anAlertTheOutboxRefusesLeavesTheStateUnsavedAndExits73() async throws {
        let hook = Hook()
        try await withFolder(hook) { dir, port in
            #expect(try await check("calm.jsonl", in: dir, port: port).status == 0)
            let mode = try FileManager.default.attributesOfItem(atPath: database(dir))[.posixPermissions] as? Int
            #expect(mode == 0o600)
            try await refuseInserts(dir)
            let refused = try await check("up.jsonl", in: dir, port: port)
            #expect(refused.status == 73, "\(refused.stderr)")
            #expect(refused.stdout.contains("\"id\":\"up:AAA:2000\""))
            #expect(
                refused.stderr.contains(
                    "pricealert: error: cannot write 1 alert to the outbox in st/pricealert.sqlite: database or disk is full"
                ))
            #expect(refused.stderr.contains("not sent to webhook and exec sinks: up:AAA:2000"))
            #expect(refused.stderr.contains("pricealert: error: state not saved in st"))
            #expect(hook.ids.isEmpty)

            try await acceptInserts(dir)
            let again = try await check("up.jsonl", in: dir, port: port)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("\"id\":\"up:AAA:2000\""))
            #expect(hook.ids == ["up:AAA:2000"])
        }
    }

    /// The outbox refuses inserts (a trigger raising SQLite's "database or disk is full").
    func refuseInserts(_ dir: URL) async throws {
        try await openDatabase(database(dir)).write { db in
            try db.execute(
                sql:
                    "CREATE TRIGGER full BEFORE INSERT ON outbox BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END"
            )
        }
    }

    func acceptInserts(_ dir: URL) async throws {
        try await openDatabase(database(dir)).write { db in try db.execute(sql: "DROP TRIGGER full") }
    }

    /// `replay --dispatch`: the alert is listed, not sent, and the run exits 73 naming it.
    @Test func replayDispatchExits73ForAnAlertTheOutboxRefuses() async throws {
        let hook = Hook()
        try await withFolder(hook) { dir, port in
            let environment = ["HOOK_URL": "http://127.0.0.1:\(port)/hook"]
            let replay = [
                "replay", "--rules", "rules.json", "--dispatch", "--state", "st", "--format", "json", "--ticks"
            ]
            #expect(
                try await PriceAlertBinary.run(replay + ["calm.jsonl"], in: dir, environment: environment).status == 0)
            try await refuseInserts(dir)
            let refused = try await PriceAlertBinary.run(replay + ["up.jsonl"], in: dir, environment: environment)
            #expect(refused.status == 73, "\(refused.stderr)")
            #expect(refused.stdout.contains("\"id\":\"up:AAA:2000\""))
            #expect(
                refused.stderr.contains(
                    "cannot write 1 alert to the outbox in st/pricealert.sqlite: database or disk is full"))
            #expect(refused.stderr.contains("not sent to webhook and exec sinks: up:AAA:2000"))
            #expect(hook.ids.isEmpty)
        }
    }

    /// `live.json`: BTC above 1, to stdout and the webhook; and the state folder, made by a
    /// command that changes nothing in it.
    func putLiveRules(in dir: URL) async throws {
        try put(
            """
            {"version": 1,
             "sinks": {"out": {"type": "stdout", "format": "json"},
                       "ops": {"type": "webhook", "urlEnv": "HOOK_URL", "retry": {"backoff": "20ms", "maxBackoff": "100ms"}}},
             "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["out", "ops"]}]}
            """, as: "live.json", in: dir)
        #expect(try await PriceAlertBinary.run(["outbox", "purge", "--state", "st", "--dead"], in: dir).status == 0)
    }

    /// `run` on `live.json` against the exchange with `--listen`, saving its state every 200 ms;
    /// `body` gets the daemon and its status server's base URL.
    func withDaemon(
        in dir: URL, hookPort: Int, exchangePort: Int,
        _ body: (PriceAlertBinary.Running, String) async throws -> Void
    ) async throws {
        let daemon = try PriceAlertBinary.start(
            [
                "run", "--rules", "live.json", "--source", "btse",
                "--endpoint", "http://127.0.0.1:\(exchangePort)", "--state", "st",
                "--listen", "127.0.0.1:0", "--save-every", "200ms"
            ],
            in: dir, environment: ["HOOK_URL": "http://127.0.0.1:\(hookPort)/hook"])
        try await body(daemon, try await daemon.statusBase())
    }

    func health(_ base: String) async throws -> (status: Int, body: String) {
        let response = try await CurlHTTPClient.shared.send(
            AlertHTTP.HTTPRequest(url: "\(base)/healthz", timeout: 60_000))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Waits until `condition` holds, up to 60 s; returns whether it did.
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<3_000 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }

    /// The daemon: an alert the outbox refuses is held, `/healthz` says why, SIGTERM exits 73
    /// naming it and saves no state past it; the next run (the outbox writable again) fires the
    /// alert again and delivers it once.
    @Test func theDaemonSavesNoStatePastAnAlertItCannotWrite() async throws {
        let hook = Hook()
        try await withHeldAlert(hook) { dir, hookPort, exchangePort, daemon, base in
            let health = try await health(base)
            #expect(health.status == 503)
            #expect(
                health.body.hasPrefix("outbox: 1 alert could not be written to the outbox: database or disk is full"))
            #expect(try await daemon.stop(signal: SIGTERM) == 73, "\(daemon.stderr)")
            #expect(
                daemon.stderr.contains(
                    "cannot write 1 alert to the outbox in st/pricealert.sqlite: database or disk is full"))
            #expect(daemon.stderr.contains("not sent to webhook and exec sinks: btc-listed:BTC:"))
            #expect(hook.ids.isEmpty)

            try await acceptInserts(dir)
            try await withDaemon(in: dir, hookPort: hookPort, exchangePort: exchangePort) { daemon, _ in
                _ = try await daemon.waitForStdoutLine(containing: "\"rule\":\"btc-listed\"", timeout: 30)
                #expect(try await eventually { hook.ids.count == 1 })
                #expect(try await daemon.stop(signal: SIGTERM) == 0)
            }
            #expect(hook.ids.count == 1 && hook.ids.first?.hasPrefix("btc-listed:BTC:") == true)
        }
    }

    /// The daemon: once the outbox takes writes again, the held alert is written (with no other
    /// write coming along) and delivered, and `/healthz` is well again.
    @Test func theDaemonWritesAHeldAlertOnceTheOutboxRecovers() async throws {
        let hook = Hook()
        try await withHeldAlert(hook) { dir, _, _, daemon, base in
            try await acceptInserts(dir)
            _ = try await daemon.waitForStderrLine(containing: "the outbox takes alerts again", timeout: 30)
            #expect(try await eventually { hook.ids.count == 1 })
            #expect(try await eventually { try await health(base).status == 200 })
            #expect(try await daemon.stop(signal: SIGTERM) == 0)
            #expect(hook.ids.count == 1)
            // The state saved once the outbox recovered says the rule fired: BTC, still above 1,
            // fires nothing.
            try put(#"{"time": 4102444800000, "symbol": "BTC", "price": 50000}"# + "\n", as: "btc.jsonl", in: dir)
            let after = try await PriceAlertBinary.run(
                [
                    "check", "--rules", "live.json", "--ticks", "btc.jsonl", "--state", "st",
                    "--format", "json"
                ],
                in: dir, environment: ["HOOK_URL": "http://127.0.0.1:1/hook"])
            #expect(after.status == 0, "\(after.stderr)")
            #expect(after.stdout.isEmpty)
        }
    }

    /// A `run` daemon (`withDaemon`) over an outbox that refuses inserts, once it has logged that
    /// it cannot write its first alert; `body` gets the folder, the hook's and the exchange's
    /// ports, the daemon and its status server's base URL.
    func withHeldAlert(
        _ hook: Hook,
        _ body: @Sendable (URL, Int, Int, PriceAlertBinary.Running, String) async throws -> Void
    ) async throws {
        try await withFolder(hook) { dir, hookPort in
            try await putLiveRules(in: dir)
            try await refuseInserts(dir)
            try await LiveCommandTests().withExchange { exchangePort in
                try await withDaemon(in: dir, hookPort: hookPort, exchangePort: exchangePort) { daemon, base in
                    _ = try await daemon.waitForStderrLine(containing: "cannot write btc-listed:BTC:", timeout: 30)
                    try await body(dir, hookPort, exchangePort, daemon, base)
                }
            }
        }
    }

    /// A state folder whose outbox table is gone: exit 73 naming the file and the table before
    /// anything is evaluated or sent.
    @Test func aMissingOutboxTableIsAnErrorNamingTheFile() async throws {
        let hook = Hook()
        try await withFolder(hook) { dir, port in
            #expect(try await check("calm.jsonl", in: dir, port: port).status == 0)
            try await openDatabase(database(dir)).write { db in try db.execute(sql: "DROP TABLE outbox") }
            let broken = try await check("up.jsonl", in: dir, port: port)
            #expect(broken.status == 73)
            #expect(broken.stdout.isEmpty)
            #expect(
                broken.stderr.contains(
                    "pricealert: error: state folder st: cannot read the outbox: st/pricealert.sqlite: no such table: outbox"
                ))
            #expect(hook.ids.isEmpty)
        }
    }

    /// A damaged page (the outbox's) and a file cut to 0 bytes are errors naming the file, not a
    /// fresh start; with the file restored, the next run fires and delivers the alert.
    @Test func aDamagedOrEmptyDatabaseIsAnErrorNotAFreshStart() async throws {
        let hook = Hook()
        try await withFolder(hook) { dir, port in
            #expect(try await check("calm.jsonl", in: dir, port: port).status == 0)
            let path = database(dir)
            let (pageSize, outboxPage) = try await openDatabase(path).read { db in
                (
                    try Int.fetchOne(db, sql: "PRAGMA page_size")!,
                    try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'outbox'")!
                )
            }
            let good = try Data(contentsOf: URL(fileURLWithPath: path))

            var damaged = good
            damaged.replaceSubrange(
                (outboxPage - 1) * pageSize..<(outboxPage - 1) * pageSize + 64,
                with: Data(repeating: 0xA5, count: 64))
            try damaged.write(to: URL(fileURLWithPath: path))
            let corrupt = try await check("up.jsonl", in: dir, port: port)
            #expect(corrupt.status == 73)
            #expect(
                corrupt.stderr.contains("st/pricealert.sqlite: database disk image is malformed"), "\(corrupt.stderr)")
            #expect(corrupt.stdout.isEmpty && hook.ids.isEmpty)

            try Data().write(to: URL(fileURLWithPath: path))
            let empty = try await check("up.jsonl", in: dir, port: port)
            #expect(empty.status == 73)
            #expect(
                empty.stderr.contains("state folder st: st/pricealert.sqlite is empty (0 bytes)"), "\(empty.stderr)")
            #expect(empty.stdout.isEmpty && hook.ids.isEmpty)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "the empty file is left as it was")

            try good.write(to: URL(fileURLWithPath: path))
            let restored = try await check("up.jsonl", in: dir, port: port)
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(hook.ids == ["up:AAA:2000"])
        }
    }

    /// A receiver that fails four requests in nine (500, 429, 500, 503): one `outbox flush`
    /// keeps retrying until every alert is delivered, each exactly once by id.
    @Test func flushRetriesTransientFailuresUntilEveryAlertIsDelivered() async throws {
        // Six rules, one symbol each; every symbol crosses 100 upwards 50 times: 300 alerts.
        let symbols = (0..<6).map { "S\($0)" }
        let rules = symbols.map {
            #"{"id": "up-\#($0)", "symbol": "\#($0)", "when": {"price": {"crossesAbove": 100}}, "notify": ["ops"]}"#
        }
        var lines: [String] = []
        var expected: [String] = []
        for i in 0..<100 {
            let time = 1_700_000_000_000 + Int64(i) * 1000
            for symbol in symbols {
                lines.append(#"{"time": \#(time), "symbol": "\#(symbol)", "price": \#(i % 2 == 0 ? 99 : 101)}"#)
                if i % 2 == 1 { expected.append("up-\(symbol):\(symbol):\(time)") }
            }
        }
        let ticks = lines.joined(separator: "\n") + "\n"
        let hook = Hook(pattern: [200, 500, 200, 429, 200, 500, 200, 503, 200])
        try await withFolder(hook) { dir, port in
            try put(
                """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "urlEnv": "HOOK_URL", "timeout": "60s",
                                   "retry": {"backoff": "20ms", "maxBackoff": "100ms"}}},
                 "rules": [\(rules.joined(separator: ",\n"))]}
                """, as: "rules.json", in: dir)
            try put(ticks, as: "ticks.jsonl", in: dir)
            let queued = try await queue("ticks.jsonl", in: dir)
            #expect(queued.status == 74)
            #expect(queued.stderr.contains("check: 300 deliveries failed or wait in the outbox"))

            let flush = try await PriceAlertBinary.run(
                ["outbox", "flush", "--rules", "rules.json", "--state", "st", "--timeout", "60s"],
                in: dir, environment: ["HOOK_URL": "http://127.0.0.1:\(port)/hook"])
            #expect(flush.status == 0, "\(flush.stderr.suffix(2_000))")
            #expect(flush.stderr.contains("outbox: 300 delivered, 0 dead-lettered, 0 still pending"))
        }
        #expect(hook.ids.count == 300)
        #expect(hook.ids.sorted() == expected.sorted())
        #expect(hook.requests.withLock { $0 } > 300, "the receiver failed some requests")
    }

    /// `check`'s drain retries too: a receiver that answers 503 twice, then 200, gets the alert
    /// within one run, which exits 0.
    @Test func checkRetriesATransientFailureBeforeItExits() async throws {
        let hook = Hook(pattern: [503, 503] + Array(repeating: 200, count: 100))
        try await withFolder(hook) { dir, port in
            let run = try await check("up.jsonl", in: dir, port: port)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(hook.ids == ["up:AAA:2000"])
        }
    }

    /// `outbox list` reads the outbox while another pricealert holds the folder; `flush` and
    /// `purge`, which change it, are refused.
    @Test func listReadsTheOutboxWhileAnotherPricealertHoldsTheFolder() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try await queue("up.jsonl", in: dir).status == 74)
        let fd = open(dir.appendingPathComponent("st/pricealert.lock").path, O_RDWR)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)

        let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "st", "--format", "json"], in: dir)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("\"state\":\"pending\",\"sink\":\"ops\",\"id\":\"up:AAA:2000\""))
        let text = try await PriceAlertBinary.run(["outbox", "list", "--state", "st"], in: dir)
        #expect(text.stdout.hasSuffix("1 pending, 0 dead (st)\n"))
        let flush = try await PriceAlertBinary.run(
            ["outbox", "flush", "--rules", "rules.json", "--state", "st"],
            in: dir, environment: ["HOOK_URL": "http://127.0.0.1:1/hook"])
        #expect(flush.status == 75)
        #expect(try await PriceAlertBinary.run(["outbox", "purge", "--state", "st", "--all"], in: dir).status == 75)
        // The read-only listing left the folder as it was.
        #expect(
            try await openDatabase(database(dir)).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox")
            } == 1)
    }
}
