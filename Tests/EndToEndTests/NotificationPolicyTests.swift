import AlertTestSupport
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import SeededRandom
import Synchronization
import Testing

/// The event-time policy stages (Docs/sinks.md#notification-policy) as the built binary applies
/// them, checked at a real webhook receiver on 127.0.0.1 against what the test computes from
/// the rules of Docs/sinks.md.
@Suite("end to end: notification policy", .programs)
struct NotificationPolicyTests {
    /// One request as the receiver saw it: a plain event, or a digest of events.
    struct Arrival: Sendable, Equatable {
        var sink: String
        var id: String
        var digest: Bool
        var held: Bool
        var events: [String]

        /// A `json`-preset body or a file sink's line: an event, or `{"kind": "digest", …}`.
        init?(sink: String, json: Data) {
            guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
                let id = object["id"] as? String
            else { return nil }
            self.sink = sink
            self.id = id
            digest = object["kind"] as? String == "digest"
            held = object["held"] as? Bool ?? false
            events = digest ? (object["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } : [id]
        }
    }

    /// What each of `sinks` received: a webhook's requests at `receiver`, and a file sink's
    /// lines in `out/SINK.jsonl` (sink names ending in `-file`).
    static func received(_ sink: String, _ receiver: Receiver, in dir: URL) throws -> [Arrival] {
        guard sink.hasSuffix("-file") else { return receiver.of(sink) }
        let text = try String(contentsOf: dir.appendingPathComponent("out/\(sink).jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { try #require(Arrival(sink: sink, json: Data($0.utf8))) }
    }

    /// A webhook sink `name` to `receiver` and a file sink `name-file`, both with `policy` (JSON
    /// object members); `"name", "name-file"` for `notify`.
    static func twins(_ name: String, port: Int, _ policy: String) -> (sinks: String, notify: String) {
        (
            """
            "\(name)": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook/\(name)", \(policy)},
            "\(name)-file": {"type": "file", "path": "out/\(name)-file.jsonl", \(policy)}
            """, "\"\(name)\", \"\(name)-file\""
        )
    }

    /// Runs `check` on what each twin received: the webhook, through the outbox, and the file
    /// sink, delivered directly.
    static func forTwins(_ name: String, _ receiver: Receiver, in dir: URL, _ check: ([Arrival]) throws -> Void) throws
    {
        try check(try received(name + "-file", receiver, in: dir))
        try check(try received(name, receiver, in: dir))
    }

    /// A `json`-preset webhook receiver: every POST to `/hook/SINK` is answered 200 and recorded.
    final class Receiver: Sendable {
        let arrivals = Mutex<[Arrival]>([])
        /// One record per event received (a digest of 5 counts 5).
        let events = EventCounter()

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook/:sink") { request, context -> Response in
                let body = try await request.body.collect(upTo: 1 << 24)
                guard let arrival = Arrival(sink: context.parameters.get("sink") ?? "", json: Data(buffer: body)) else {
                    return Response(status: .badRequest)
                }
                self.arrivals.withLock { $0.append(arrival) }
                for _ in arrival.events { self.events.record() }
                return Response(status: .ok)
            }
            return router
        }

        func of(_ sink: String) -> [Arrival] { arrivals.withLock { $0.filter { $0.sink == sink } } }
    }

    /// An event of the listing: id, rule, symbol and time (from its id, `rule:SYMBOL:millis`).
    struct Event: Sendable, Equatable {
        var id: String
        var rule: String
        var symbol: String
        var time: Int64
    }

    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-policy-\(UUID().uuidString)")
        // `out/` for the file sinks.
        try FileManager.default.createDirectory(
            at: url.appendingPathComponent("out"), withIntermediateDirectories: true)
        return url
    }

    /// The events `replay` lists for these rules and ticks, in order (no sink is touched).
    func listed(_ dir: URL, ticks: String = "ticks.jsonl") async throws -> [Event] {
        let result = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", ticks, "--format", "json"], in: dir)
        try #require(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let id = try #require(object["id"] as? String)
            let time = try #require(Int64(id.split(separator: ":").last ?? ""))
            return Event(
                id: id, rule: try #require(object["rule"] as? String),
                symbol: try #require(object["symbol"] as? String), time: time)
        }
    }

    /// Docs/sinks.md#groups-and-digests, written out: per key, the first event opens a digest at
    /// `t0`; later ones with time < t0 + window join until it holds `max`; the first at or after
    /// t0 + window opens the next; the end closes the rest. Each digest as its event ids.
    static func groups(_ events: [Event], window: Int64, max: Int, key: (Event) -> String) -> [[String]] {
        var open: [String: (t0: Int64, ids: [String])] = [:]
        var closed: [[String]] = []
        for event in events {
            let k = key(event)
            if let digest = open[k], event.time >= digest.t0 + window {
                closed.append(digest.ids)
                open[k] = nil
            }
            if open[k] == nil { open[k] = (event.time, []) }
            open[k]!.ids.append(event.id)
            if open[k]!.ids.count >= max {
                closed.append(open[k]!.ids)
                open[k] = nil
            }
        }
        return closed + open.values.map(\.ids)
    }

    /// Lists of ids in a fixed order, to compare as multisets.
    static func sorted(_ lists: [[String]]) -> [[String]] {
        lists.sorted { $0.joined(separator: ",") < $1.joined(separator: ",") }
    }

    /// Seeded prices around 100 for three symbols, one tick every 7 s: many crossings.
    static func walk(seed: UInt64, count: Int, start: Int64) -> String {
        var random = SeededRandom(seed: seed)
        var lines: [String] = []
        for i in 0..<count {
            let symbol = ["BTC", "ETH", "SOL"][random.below(3)]
            let price = 100 + random.uniform(-3...3)
            lines.append(#"{"time": \#(start + Int64(i) * 7_000), "symbol": "\#(symbol)", "price": \#(price)}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static let crossingRules = """
        [{"id": "up", "symbols": ["BTC", "ETH", "SOL"], "when": {"price": {"crossesAbove": 100}}},
         {"id": "down", "symbols": ["BTC", "ETH", "SOL"], "when": {"price": {"crossesBelow": 100}}}]
        """

    @Test func replayDigestsHoldExactlyTheEventsTheGroupRulesPutTogether() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.walk(seed: 15, count: 900, start: 1_700_000_000_000)
            .write(to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let receiver = Receiver()
        try await LoopbackServer.with(receiver.router()) { port in
            let grouped = Self.twins("grouped", port: port, #""group": {"window": "2m", "by": ["symbol"], "max": 4}"#)
            try """
            {"version": 2,
             "sinks": {\(grouped.sinks)},
             "defaults": {"notify": [\(grouped.notify)]},
             "rules": \(Self.crossingRules)}
            """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let events = try await listed(dir)
            #expect(events.count > 100)
            let expected = Self.groups(events, window: 120_000, max: 4) { $0.symbol }
            #expect(
                expected.contains { $0.count == 4 } && expected.contains { $0.count == 1 }
                    && expected.contains { (2...3).contains($0.count) })

            let replay = try await PriceAlertBinary.run(
                ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--dispatch"], in: dir)
            #expect(replay.status == 0, "\(replay.stderr)")
            try await receiver.events.wait(for: events.count)
            try Self.forTwins("grouped", receiver, in: dir) { arrivals in
                #expect(Self.sorted(arrivals.map(\.events)) == Self.sorted(expected))
                for arrival in arrivals {
                    // One-event digests go out plain; a digest is named by its sink and first event.
                    #expect(arrival.digest == (arrival.events.count > 1))
                    if arrival.digest { #expect(arrival.id == "digest:\(arrival.sink):\(arrival.events[0])") }
                    #expect(!arrival.held)
                }
            }
        }
    }

    /// Berlin's clocks go forward at 01:00 UTC on 29 March 2026: the night window 22:00–07:00
    /// runs from 21:00Z on the 28th to 05:00Z on the 29th (eight hours), not to 06:00Z.
    @Test func quietHoursHoldAndDropAcrossTheDaylightSavingChangeAndPriorityBypassesThem() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // From 2026-03-28T17:50:00Z a tick every 10 minutes for 16 hours; BTC crosses 100 every
        // 20 minutes from 18:00Z (rule "btc", normal), ETH every 40 minutes (rule "eth", high priority).
        let start: Int64 = 1_774_720_200_000
        var lines: [String] = []
        for i in 0..<96 {
            let time = start + Int64(i) * 600_000
            lines.append(#"{"time": \#(time), "symbol": "BTC", "price": \#(i % 2 == 0 ? 99 : 101)}"#)
            lines.append(#"{"time": \#(time + 1), "symbol": "ETH", "price": \#(i % 4 < 2 ? 99 : 101)}"#)
        }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let receiver = Receiver()
        try await LoopbackServer.with(receiver.router()) { port in
            let night = #"[{"from": "22:00", "to": "07:00", "tz": "Europe/Berlin"}]"#
            let hold = Self.twins("hold", port: port, #""quiet": \#(night), "group": {"window": "1h"}"#)
            try """
            {"version": 2,
             "sinks": {
               \(hold.sinks),
               "drop": {"type": "webhook", "url": "http://127.0.0.1:\(port)/hook/drop", "quiet": \(night), "quietAction": "drop"}},
             "defaults": {"notify": [\(hold.notify), "drop"]},
             "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}},
                       {"id": "eth", "symbol": "ETH", "when": {"price": {"crossesAbove": 100}}, "priority": "high"}]}
            """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let events = try await listed(dir)
            // In the window by Foundation's reading of Berlin time.
            var berlin = Calendar(identifier: .gregorian)
            berlin.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
            func quiet(_ event: Event) -> Bool {
                let parts = berlin.dateComponents(
                    [.hour, .minute], from: Date(timeIntervalSince1970: Double(event.time) / 1000))
                let minute = parts.hour! * 60 + parts.minute!
                return minute >= 22 * 60 || minute < 7 * 60
            }
            let normal = events.filter { $0.rule == "btc" }, urgent = events.filter { $0.rule == "eth" }
            let held = normal.filter(quiet)
            // The window's edges in UTC, as the daylight-saving change makes them.
            #expect(held.first?.time == 1_774_731_600_000) // 2026-03-28T21:00:00Z = 22:00 CET
            #expect(held.last.map { $0.time < 1_774_760_400_000 } == true) // before 05:00Z = 07:00 CEST
            #expect(normal.contains { $0.time == 1_774_760_400_000 && !quiet($0) }) // 05:00Z is not quiet
            #expect(urgent.contains(where: quiet))

            let replay = try await PriceAlertBinary.run(
                ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--dispatch"], in: dir)
            #expect(replay.status == 0, "\(replay.stderr)")
            #expect(
                replay.stderr.contains(
                    "\(2 * held.count) events held by quiet hours, \(held.count) events dropped by quiet hours"))
            let expectedHold =
                Self.groups(normal.filter { !quiet($0) }, window: 3_600_000, max: 100) { _ in "" }
                + [held.map(\.id)] + urgent.map { [$0.id] }
            let expectedDrop = (normal.filter { !quiet($0) } + urgent).map { [$0.id] }
            try await receiver.events.wait(for: expectedHold.joined().count + expectedDrop.count)
            #expect(Self.sorted(receiver.of("drop").map(\.events)) == Self.sorted(expectedDrop))
            try Self.forTwins("hold", receiver, in: dir) { arrivals in
                #expect(Self.sorted(arrivals.map(\.events)) == Self.sorted(expectedHold))
                #expect(arrivals.filter(\.held).map(\.id) == ["digest:\(arrivals.first?.sink ?? ""):\(held[0].id)"])
                // High priority skips quiet hours and groups: each urgent event alone, at once.
                for event in urgent {
                    #expect(arrivals.contains { !$0.digest && $0.id == event.id })
                }
            }
        }
    }
}

extension NotificationPolicyTests {
    /// `kill -9` of a replay reading a FIFO, once everything it made is held (a whole-day quiet
    /// window) or in open digests (a one-day group window) and journaled; the next replay of the
    /// state folder delivers every event, in the digests an uninterrupted replay makes.
    @Test func killedWithOpenDigestsAndHeldEventsTheNextStartDeliversEveryEventInTheSameDigests() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ticks = Self.walk(seed: 7, count: 150, start: 1_700_000_000_000)
        try ticks.write(to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        try "".write(to: dir.appendingPathComponent("none.jsonl"), atomically: true, encoding: .utf8)
        let fifo = dir.appendingPathComponent("feed").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let receiver = Receiver()
        try await LoopbackServer.with(receiver.router()) { port in
            let grouped = Self.twins(
                "grouped", port: port, #""group": {"window": "1d", "by": ["symbol"], "max": 1000}"#)
            let night = Self.twins("night", port: port, #""quiet": [{"from": "00:00", "to": "00:00"}]"#)
            try """
            {"version": 2,
             "sinks": {\(grouped.sinks), \(night.sinks)},
             "defaults": {"notify": [\(grouped.notify), \(night.notify)]},
             "rules": \(Self.crossingRules)}
            """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let events = try await listed(dir)
            #expect(events.count > 20)

            let doomed = try PriceAlertBinary.start(
                [
                    "replay", "--rules", "rules.json", "--ticks", "feed", "--dispatch",
                    "--state", "state", "--format", "json"
                ], in: dir)
            // The writer stays open: the replay is still reading when it is killed.
            let writer = try await Task.detached { () throws -> FileHandle in
                let handle = try #require(FileHandle(forWritingAtPath: fifo))
                try handle.write(contentsOf: Data(ticks.utf8))
                return handle
            }.value
            defer { try? writer.close() }
            _ = try await doomed.waitForStdoutLine(containing: events.last!.id, timeout: 60)
            // Every event held for both sinks, committed in the journal (read beside the replay).
            let database = try DatabaseQueue(
                path: dir.appendingPathComponent("state/pricealert.sqlite").path,
                configuration: {
                    var c = Configuration(); c.readonly = true; return c
                }())
            var looks = 0
            while looks < 600,
                try await database.read({ try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM policy_pending") }) != 4
                    * events.count
            {
                looks += 1
                try await Task.sleep(for: .milliseconds(100))
            }
            try database.close()
            kill(doomed.pid, SIGKILL)
            _ = try await doomed.wait(timeout: 60)
            #expect(doomed.endedBySignal == true)
            #expect(receiver.events.count == 0)
            for file in ["grouped-file", "night-file"] {
                #expect(
                    (try? String(contentsOf: dir.appendingPathComponent("out/\(file).jsonl"), encoding: .utf8)) ?? ""
                        == "")
            }

            let restarted = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "none.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir)
            #expect(restarted.status == 0, "\(restarted.stderr)")
            try await receiver.events.wait(for: 2 * events.count)
            let expected = Self.groups(events, window: 86_400_000, max: 1000) { $0.symbol }
            try Self.forTwins("grouped", receiver, in: dir) { arrivals in
                #expect(Self.sorted(arrivals.map(\.events)) == Self.sorted(expected))
                #expect(
                    Set(arrivals.map(\.id)) == Set(expected.map { "digest:\(arrivals.first?.sink ?? ""):\($0[0])" }))
            }
            try Self.forTwins("night", receiver, in: dir) { arrivals in
                #expect(arrivals.map(\.events) == [events.map(\.id)])
                #expect(arrivals.map(\.id) == ["digest:\(arrivals.first?.sink ?? ""):\(events[0].id)"])
                #expect(arrivals.allSatisfy { $0.held })
            }
        }
    }

    /// `check` keeps open digests in the state folder between runs, closes one by the wall clock
    /// once its window has passed, and one by the first event past its window.
    @Test func checkCarriesOpenDigestsAcrossRunsAndClosesThemByTheClock() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let receiver = Receiver()
        try await LoopbackServer.with(receiver.router()) { port in
            let grouped = Self.twins("grouped", port: port, #""group": {"window": "1h"}"#)
            try """
            {"version": 2,
             "sinks": {\(grouped.sinks)},
             "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}, "notify": [\(grouped.notify)]}]}
            """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            // Three crossings a minute apart from `start`: ids up:BTC:start+60000·(2k+1).
            func piece(_ name: String, from start: Int64) async throws -> [String] {
                let lines = (0..<6).map {
                    #"{"time": \#(start + Int64($0) * 60_000), "symbol": "BTC", "price": \#($0 % 2 == 0 ? 99 : 101)}"#
                }
                try (lines.joined(separator: "\n") + "\n").write(
                    to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
                let check = try await PriceAlertBinary.run(
                    ["check", "--rules", "rules.json", "--ticks", name, "--state", "state"], in: dir)
                #expect(check.status == 0, "\(check.stderr)")
                return [1, 3, 5].map { "up:BTC:\(start + Int64($0) * 60_000)" }
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000) / 60_000 * 60_000
            // Two hours ago: the digest's window has passed by the clock; this check closes it.
            let old = try await piece("old.jsonl", from: now - 7_200_000)
            try await receiver.events.wait(for: 3)
            try Self.forTwins("grouped", receiver, in: dir) { #expect($0.map(\.events) == [old]) }
            // Within the hour: two checks add to one open digest, delivered by neither.
            let first = try await piece("a.jsonl", from: now - 900_000)
            let second = try await piece("b.jsonl", from: now - 480_000)
            #expect(receiver.events.count == 3)
            try Self.forTwins("grouped", receiver, in: dir) { #expect($0.map(\.events) == [old]) }
            // An event an hour after the first closes it (and opens the next, kept open).
            let third = try await piece("c.jsonl", from: now - 900_000 + 3_600_000)
            try await receiver.events.wait(for: 9)
            try Self.forTwins("grouped", receiver, in: dir) { arrivals in
                #expect(arrivals.map(\.events) == [old, first + second])
                #expect(arrivals.last?.id == "digest:\(arrivals.first?.sink ?? ""):\(first[0])")
            }
            #expect(!third.isEmpty && receiver.events.count == 9)
        }
    }
}

extension LiveCommandTests {
    /// A silence added while `run` runs keeps the rule's events from the sink (counted in
    /// `/metrics`) once the daemon has read it; expiring it lets them through again.
    @Test func aSilenceAddedWhileRunRunsTakesEffectAndItsExpiryToo() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        {"version": 2,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "rules": [{"id": "btc-always", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"}, "notify": ["out"]}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let socket = try NotifySocket()
        try await withExchange { port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--state", "state", "--listen", "127.0.0.1:0"
                ],
                in: dir, environment: ["NOTIFY_SOCKET": socket.address])
            let metrics = try await daemon.statusBase() + "/metrics"
            let delivered = #"pricealert_deliveries_total{sink="out",outcome="delivered"}"#
            let silenced = "pricealert_events_silenced_total"
            _ = try await poll(metrics, draining: socket) { (Self.sample($0.body, delivered) ?? 0) >= 2 }

            let add = try await PriceAlertBinary.run(
                ["silence", "add", "--rule", "btc-*", "--for", "1h", "--state", "state"], in: dir)
            #expect(add.status == 0, "\(add.stderr)")
            let id = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            _ = try await daemon.waitForStderrLine(containing: "silences changed: 1 in force", timeout: 60)
            // Once one event is silenced, every later one is (events leave in time order).
            let first = try await poll(metrics, draining: socket) { (Self.sample($0.body, silenced) ?? 0) >= 1 }
            let before = try #require(Self.sample(first.body, delivered))
            let later = try await poll(metrics, draining: socket) {
                (Self.sample($0.body, silenced) ?? 0) >= (Self.sample(first.body, silenced) ?? 0) + 3
            }
            #expect(Self.sample(later.body, delivered) == before)

            let expire = try await PriceAlertBinary.run(["silence", "expire", id, "--state", "state"], in: dir)
            #expect(expire.status == 0, "\(expire.stderr)")
            _ = try await daemon.waitForStderrLine(containing: "silences changed: 0 in force", timeout: 60)
            _ = try await poll(metrics, draining: socket) { (Self.sample($0.body, delivered) ?? 0) > before }
            #expect(try await daemon.stop(signal: SIGTERM) == 0)
        }
    }
}

extension LiveCommandTests {
    /// `kill -9` of `run` while its events are held for the night and in an open digest: what
    /// the journal holds reaches the sinks from the next start of the state folder (here a
    /// replay of no ticks, which closes everything at its end), in one digest per sink.
    @Test func runKilledWithHeldEventsAndOpenDigestsLosesNoneOfThem() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        try "".write(to: dir.appendingPathComponent("none.jsonl"), atomically: true, encoding: .utf8)
        try """
        {"version": 2,
         "sinks": {"grouped": {"type": "file", "path": "out/grouped.jsonl", "group": {"window": "1d", "max": 1000}},
                   "night": {"type": "file", "path": "out/night.jsonl", "quiet": [{"from": "00:00", "to": "00:00"}]}},
         "rules": [{"id": "btc-always", "symbol": "BTC", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"},
                    "notify": ["grouped", "night"]}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let journal = dir.appendingPathComponent("state/pricealert.sqlite").path
        func held() throws -> [(sink: String, id: String)] {
            guard FileManager.default.fileExists(atPath: journal) else { return [] }
            let database = try DatabaseQueue(
                path: journal,
                configuration: {
                    var c = Configuration(); c.readonly = true; return c
                }())
            defer { try? database.close() }
            return try database.read { db in
                try Row.fetchAll(db, sql: "SELECT sink, alert_id FROM policy_pending ORDER BY seq").map {
                    ($0[0], $0[1])
                }
            }
        }
        let kept = try await withExchange { port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--state", "state"
                ],
                in: dir)
            var looks = 0
            while looks < 600, (try? held().count) ?? 0 < 10 {
                looks += 1
                try await Task.sleep(for: .milliseconds(100))
            }
            kill(daemon.pid, SIGKILL)
            _ = try await daemon.wait(timeout: 60)
            return try held()
        }
        #expect(kept.count >= 10)
        for file in ["grouped", "night"] {
            #expect(
                (try? String(contentsOf: dir.appendingPathComponent("out/\(file).jsonl"), encoding: .utf8)) ?? "" == "")
        }
        let restarted = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "none.jsonl",
                "--dispatch", "--state", "state"
            ], in: dir)
        #expect(restarted.status == 0, "\(restarted.stderr)")
        for sink in ["grouped", "night"] {
            let ids = kept.filter { $0.sink == sink }.map(\.id)
            let lines = try String(contentsOf: dir.appendingPathComponent("out/\(sink).jsonl"), encoding: .utf8)
                .split(separator: "\n").map { NotificationPolicyTests.Arrival(sink: sink, json: Data($0.utf8)) }
            #expect(lines.map { $0?.events } == [ids])
            #expect(lines.map { $0?.id } == ["digest:\(sink):\(ids[0])"])
            #expect(lines.map { $0?.held } == [sink == "night"])
        }
        #expect(try held().isEmpty)
    }
}
