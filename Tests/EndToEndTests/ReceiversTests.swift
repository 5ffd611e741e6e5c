import AlertHTTP
import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// The built binary's presets against the receivers people use: a real Alertmanager, and
/// stand-ins for Discord, Telegram and ntfy that refuse what the platform refuses.
@Suite("end to end: what the receivers take", .programs)
struct ReceiversTests {
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-receivers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    static func send(_ method: String, _ url: String, _ body: String? = nil) async throws -> (status: Int, body: String)
    {
        let request = AlertHTTP.HTTPRequest(
            method: method, url: url, headers: body == nil ? [] : [(name: "Content-Type", value: "application/json")],
            body: Array((body ?? "").utf8), timeout: 60_000)
        let response = try await CurlHTTPClient.shared.send(request)
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// The alerts Alertmanager holds now (active and suppressed; ended ones are not listed).
    static func alerts(_ base: String) async throws -> [[String: Any]] {
        let (status, body) = try await send("GET", base + "/api/v2/alerts")
        #expect(status == 200, "\(body)")
        return try #require(try json(body) as? [[String: Any]])
    }

    static func alert(_ alerts: [[String: Any]], named rule: String) -> [String: Any]? {
        alerts.first { ($0["labels"] as? [String: String])?["alertname"] == rule }
    }

    static let rules = #"""
        {
          "version": 2,
          "sinks": { "am": { "type": "webhook", "urlEnv": "AM_URL", "preset": "alertmanager" } },
          "defaults": { "notify": ["am"] },
          "rules": [
            { "id": "btc-band", "symbol": "BTC", "when": { "price": { "outside": [40000, 45000] } }, "resolve": true },
            { "id": "sol-up", "symbol": "SOL", "when": { "price": { "above": 100 } }, "message": "SOL above 100 at {{price}}" },
            { "id": "eth-quiet", "symbol": "ETH", "when": { "price": { "above": 3000 } } }
          ]
        }
        """#

    /// 2023-11-14T22:13:20Z and a minute after each other.
    static func tick(_ minute: Int64, _ symbol: String, _ price: Double) -> String {
        #"{"time": \#(1_700_000_000_000 + minute * 60_000), "symbol": "\#(symbol)", "price": \#(price)}"#
    }

    static let firing = [
        tick(0, "BTC", 43000), tick(0, "SOL", 90), tick(0, "ETH", 2900),
        tick(1, "BTC", 46000), tick(1, "SOL", 110), tick(1, "ETH", 3100)
    ]

    /// The `alertmanager` preset posts to Alertmanager's API: alerts arrive with their labels
    /// and annotations, a resolved event ends its alert, and a silence made in Alertmanager holds
    /// the alerts it matches.
    @Test(.enabled(if: AlertmanagerProcess.isInstalled, "needs Debian's prometheus-alertmanager (.ci/run installs it)"))
    func alertmanagerTakesAlertsEndsResolvedOnesAndItsSilencesHoldThem() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try (Self.firing.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("firing.jsonl"), atomically: true, encoding: .utf8)
        try ((Self.firing + [Self.tick(2, "BTC", 43000)]).joined(separator: "\n") + "\n")
            .write(to: dir.appendingPathComponent("resolved.jsonl"), atomically: true, encoding: .utf8)

        try await AlertmanagerProcess.with { base in
            #expect(try await Self.send("GET", base + "/-/ready").status == 200)
            let silence = try await Self.send(
                "POST", base + "/api/v2/silences",
                #"""
                {"matchers": [{"name": "alertname", "value": "eth-quiet", "isRegex": false, "isEqual": true}],
                 "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2099-01-01T00:00:00Z", "createdBy": "test", "comment": "held"}
                """#)
            #expect(silence.status == 200, "\(silence.body)")
            let silenceID = try #require((try Self.json(silence.body) as? [String: Any])?["silenceID"] as? String)
            let environment = ["AM_URL": base + "/api/v2/alerts"]

            let first = try await PriceAlertBinary.run(
                ["replay", "--rules", "rules.json", "--ticks", "firing.jsonl", "--dispatch"],
                in: dir, environment: environment)
            #expect(first.status == 0, "\(first.stderr)")
            let held = try await Self.alerts(base)
            #expect(held.count == 3, "\(held)")
            let band = try #require(Self.alert(held, named: "btc-band"))
            #expect(
                band["labels"] as? [String: String] == [
                    "alertname": "btc-band", "symbol": "BTC",
                    "condition": "price outside [40000, 45000]"
                ])
            #expect(band["startsAt"] as? String == "2023-11-14T22:14:20.000Z")
            #expect((band["status"] as? [String: Any])?["state"] as? String == "active")
            let sol = try #require(Self.alert(held, named: "sol-up"))
            #expect((sol["annotations"] as? [String: String])?["summary"] == "SOL above 100 at 110")
            #expect((sol["annotations"] as? [String: String])?["kind"] == "alert")
            let quiet = try #require(Self.alert(held, named: "eth-quiet"))
            #expect((quiet["status"] as? [String: Any])?["state"] as? String == "suppressed")
            #expect((quiet["status"] as? [String: Any])?["silencedBy"] as? [String] == [silenceID])

            // The same alerts again, then BTC back inside its band: its resolved event ends it.
            let second = try await PriceAlertBinary.run(
                ["replay", "--rules", "rules.json", "--ticks", "resolved.jsonl", "--dispatch"],
                in: dir, environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
            let after = try await Self.alerts(base)
            #expect(Self.alert(after, named: "btc-band") == nil, "\(after)")
            #expect(Self.alert(after, named: "sol-up") != nil)
            #expect(
                ((Self.alert(after, named: "eth-quiet")?["status"]) as? [String: Any])?["state"] as? String
                    == "suppressed")
        }
    }

    /// The text listing says which events are reminders and which are resolved, instead of
    /// repeating the alert's message as if the condition held again.
    @Test func theTextListingSaysResolvedAndReminder() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"""
        {"version": 2, "rules": [{"id": "btc-band", "symbol": "BTC", "when": {"price": {"outside": [40000, 45000]}},
                                  "resolve": true, "repeat": {"every": "1m"}}]}
        """#.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let ticks = [
            Self.tick(0, "BTC", 43000), Self.tick(1, "BTC", 46000), Self.tick(3, "BTC", 46500),
            Self.tick(4, "BTC", 43000)
        ]
        try (ticks.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let replay = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(
            replay.stdout == """
                2023-11-14T22:14:20.000Z [btc-band] BTC price outside [40000, 45000] (price 46000)
                2023-11-14T22:16:20.000Z [btc-band] reminder 1: BTC price outside [40000, 45000] (price 46500)
                2023-11-14T22:17:20.000Z [btc-band] resolved: BTC price outside [40000, 45000] (price 43000)

                """, "\(replay.stdout)")
    }

    /// A stand-in for Discord, Telegram and ntfy that refuses, with 400, a message over the
    /// platform's documented limit, and keeps every message it took.
    final class ChatPlatforms: Sendable {
        /// The messages taken, by platform.
        let taken = Mutex<[String: [String]]>([:])
        let refused = Mutex<[String]>([])

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("/discord") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                let content = object?["content"] as? String ?? ""
                return self.take(content, over: content.utf16.count > 2000, "discord")
            }
            router.post("/botTOKEN/sendMessage") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                let text = object?["text"] as? String ?? ""
                return self.take(text, over: text.utf16.count > 4096 || text.isEmpty, "telegram")
            }
            router.post("/ntfy/alerts") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                return self.take(String(buffer: body), over: body.readableBytes > 4096, "ntfy")
            }
            return router
        }

        private func take(_ text: String, over: Bool, _ platform: String) -> Response {
            if over {
                refused.withLock { $0.append("\(platform): \(text.count) characters") }
                return Response(status: .badRequest)
            }
            taken.withLock { $0[platform, default: []].append(text) }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"ok":true}"#)))
        }
    }

    /// The events a chat message carries: a digest's headline count (checked against the lines
    /// it lists and its `and N more`), or 1 for a single event.
    static func count(_ message: String) throws -> Int {
        guard message.hasPrefix("pricealert: ") else { return 1 }
        var lines = message.split(separator: "\n").map(String.init)
        let headline = lines.removeFirst()
        let total = try #require(Int(headline.dropFirst("pricealert: ".count).prefix { $0.isNumber }))
        var more = 0
        if let last = lines.last, last.hasPrefix("and "), let n = Int(last.dropFirst(4).prefix { $0.isNumber }) {
            more = n
            lines.removeLast()
        }
        #expect(lines.allSatisfy { $0.hasPrefix("[r") }, "\(lines)")
        #expect(lines.count + more == total, "\(message)")
        return total
    }

    /// A 15-event digest of long messages and one message longer than any platform takes: every
    /// preset shortens them to its limit, so all arrive and none becomes a dead letter.
    @Test func chatPresetsKeepToTheirPlatformsLimits() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rules: [[String: Any]] = (1...15).map { index in
            [
                "id": String(format: "r%02d", index), "symbol": "BTC", "when": ["price": ["above": index]],
                "message": "{{rule}} " + String(repeating: "é", count: 450)
            ]
        }
        rules.append([
            "id": "rlong", "symbol": "ETH", "when": ["price": ["above": 1]],
            "message": "{{rule}} " + String(repeating: "ab€", count: 3000)
        ])
        let group: [String: Any] = ["window": "1m"]
        // Room for every delivery at once: no backlog batching, so the long event arrives alone.
        let rate: [String: Any] = ["count": 100, "per": "1s"]
        let file: [String: Any] = [
            "version": 2,
            "sinks": [
                "discord": [
                    "type": "webhook", "urlEnv": "DISCORD_URL", "preset": "discord", "group": group, "rate": rate
                ],
                "telegram": [
                    "type": "webhook", "urlEnv": "TELEGRAM_URL", "preset": "telegram", "group": group, "rate": rate
                ],
                "ntfy": ["type": "webhook", "urlEnv": "NTFY_URL", "preset": "ntfy", "group": group, "rate": rate]
            ],
            "defaults": ["notify": ["discord", "telegram", "ntfy"]],
            "rules": rules
        ]
        try JSONSerialization.data(withJSONObject: file).write(to: dir.appendingPathComponent("rules.json"))
        let ticks = [
            Self.tick(0, "BTC", 0.5), Self.tick(0, "ETH", 0.5), Self.tick(1, "BTC", 100), Self.tick(5, "ETH", 2)
        ]
        try (ticks.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)

        let platforms = ChatPlatforms()
        let (run, list) = try await LoopbackServer.with(platforms.router()) { port in
            let environment = [
                "DISCORD_URL": "http://127.0.0.1:\(port)/discord",
                "TELEGRAM_URL": "http://127.0.0.1:\(port)/botTOKEN/sendMessage?chat_id=42",
                "NTFY_URL": "http://127.0.0.1:\(port)/ntfy/alerts"
            ]
            let run = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--dispatch",
                    "--state", "state"
                ], in: dir, environment: environment)
            let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "state"], in: dir)
            return (run, list)
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(platforms.refused.withLock { $0 }.isEmpty, "\(platforms.refused.withLock { $0 })")
        #expect(list.stdout.hasSuffix("0 pending, 0 dead (state)\n"), "\(list.stdout)")
        let messages = platforms.taken.withLock { $0 }
        for name in ["discord", "telegram", "ntfy"] {
            let taken = messages[name] ?? []
            #expect(try taken.map(Self.count).reduce(0, +) == 16, "\(name): \(taken.map { $0.prefix(60) })")
            let long = try #require(taken.first { $0.contains("rlong") }, "\(name)")
            #expect(long.hasSuffix("…") || long.contains("…\n"), "\(name): \(long.suffix(30))")
        }
    }
}
