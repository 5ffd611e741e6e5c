import AlertModel
import AlertPolicy
import AlertStore
import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// `rate`, backlog batching and `fallback` as users write them, through the built binary's
/// `replay --dispatch` to a real loopback receiver.
@Suite("end to end: rate, batching and fallback", .programs)
struct PacingCommandTests {
    /// Answers `/hook/...` 200, `/status/CODE` with that status; keeps each request's path and body.
    final class Chat: Sendable {
        let requests = Mutex<[(path: String, body: String)]>([])

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("**") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let path = request.uri.path
                self.requests.withLock { $0.append((path, String(buffer: body))) }
                if path.hasPrefix("/status/"), let code = Int(path.dropFirst("/status/".count)) {
                    return Response(status: .init(code: code))
                }
                return Response(status: .ok)
            }
            return router
        }
    }

    /// `count` rules crossing 1…count, and one BTC tick crossing each, a second apart.
    static func files(_ dir: URL, sinks: String, notify: String = #"["chat"]"#, count: Int) throws {
        let rules = (1...count).map {
            #"{"id": "r\#($0)", "symbol": "BTC", "when": {"price": {"crossesAbove": \#($0)}}}"#
        }
        let file =
            #"{"version": 2, "sinks": \#(sinks), "defaults": {"notify": \#(notify)}, "rules": [\#(rules.joined(separator: ","))]}"#
        try file.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let ticks = (0...count).map {
            #"{"time": \#(1_700_000_000_000 + Int64($0) * 1_000), "symbol": "BTC", "price": \#(Double($0) + 0.5)}"#
        }
        try (ticks.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
    }

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-pacing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// 40 alerts of a replay to a sink that takes one request per 200 ms: they leave as digests
    /// of the waiting events, every event exactly once, in order.
    @Test func aReplaysBacklogLeavesBatched() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = Chat()
        let bodies = try await LoopbackServer.with(chat.router()) { port in
            try Self.files(
                dir,
                sinks:
                    #"{"chat": {"type": "webhook", "url": "http://127.0.0.1:\#(port)/hook/chat", "rate": {"count": 1, "per": "200ms"}}}"#,
                count: 40)
            let run = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir)
            #expect(run.status == 0, "\(run.stderr)")
            return chat.requests.withLock { $0.map(\.body) }
        }
        var ids: [String] = []
        for body in bodies {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            if object["kind"] as? String == "digest" {
                ids += try #require(object["events"] as? [[String: Any]]).compactMap { $0["id"] as? String }
            } else {
                ids.append(try #require(object["id"] as? String))
            }
        }
        #expect(ids == (1...40).map { "r\($0):BTC:\(1_700_000_000_000 + Int64($0) * 1_000)" })
        #expect(bodies.count < 40)
        #expect(bodies.contains { $0.hasPrefix(#"{"kind":"digest","id":"digest:chat:"#) })
    }

    /// A sink answering 410 and one failing past its `retry.maxAge` both hand each event to
    /// their `fallback`, a file: it gets each event from each of them, and each sink keeps its
    /// dead letters.
    @Test func deadLettersFallBackToAFile() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = Chat()
        let (run, list) = try await LoopbackServer.with(chat.router()) { port in
            try Self.files(
                dir,
                sinks: #"""
                    {"chat": {"type": "webhook", "url": "http://127.0.0.1:\#(port)/status/410", "fallback": "journal"},
                     "slow": {"type": "webhook", "url": "http://127.0.0.1:\#(port)/status/503", "fallback": "journal",
                              "retry": {"backoff": "10ms", "maxAge": "300ms"}},
                     "journal": {"type": "file", "path": "undelivered.jsonl"}}
                    """#, notify: #"["chat", "slow"]"#, count: 2)
            let run = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir)
            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
            return (run, list)
        }
        #expect(run.status == 74, "\(run.stderr)")
        let journal = try String(contentsOf: dir.appendingPathComponent("undelivered.jsonl"), encoding: .utf8)
        let ids = journal.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
        let expected = ["r1:BTC:1700000001000", "r2:BTC:1700000002000"]
        #expect(ids.sorted() == (expected + expected).sorted())
        #expect(list.stdout.hasSuffix("0 pending, 4 dead (state)\n"))
        let dead = list.stdout.split(separator: "\n").filter { $0.hasPrefix("dead") }
        #expect(dead.filter { $0.contains("  chat  ") && $0.contains("HTTP 410") }.count == 2)
        #expect(dead.filter { $0.contains("  slow  ") && $0.contains("gave up after") }.count == 2)
    }
}

/// `outbox list` shows a digest row as one delivery: its id and size in text, its digest JSON
/// in `json`.
@Suite("end to end: digests in the outbox listing", .programs)
struct OutboxDigestListTests {
    @Test func aPendingDigestIsListedAsOneDelivery() async throws {
        let dir = try PacingCommandTests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = (1...3).map {
            Alert(
                rule: "r\($0)", symbol: "BTC", time: Int64($0) * 1_000, price: 10, condition: "price above 5",
                threshold: .value(5), value: 10, message: "m\($0)", notify: ["chat"])
        }
        let digest = Digest(sink: "chat", events: events, held: true)
        do {
            let store = try StateStore.open(StateFolder(path: dir.appendingPathComponent("state").path))
            defer { store.close() }
            try store.outbox.enqueue(.digest(digest), sinks: ["chat"], now: 5_000)
        }
        let text = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("pending  chat  digest:chat:r1:BTC:1000  (digest of 3, held)  attempts 0  next "))
        #expect(text.stdout.hasSuffix("1 pending, 0 dead (state)\n"))
        let json = try await PriceAlertBinary.run(["outbox", "list", "--state", "state", "--format", "json"], in: dir)
        #expect(json.status == 0)
        #expect(
            json.stdout.hasPrefix(#"{"state":"pending","sink":"chat","id":"digest:chat:r1:BTC:1000","urgent":false,"#))
        #expect(json.stdout.hasSuffix(#","digest":"# + DigestFormat.json(digest) + "}\n"))
    }
}
