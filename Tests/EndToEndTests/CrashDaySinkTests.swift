import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// The paste-able sink of Docs/sinks.md "Staying calm on a crash day" (`Rules/crash-day.json`,
/// its sinks and defaults kept as shipped, only its rules replaced) through the built binary's
/// `replay --dispatch`, with `TELEGRAM_BOT_URL` pointing at a loopback Telegram stand-in.
@Suite("end to end: the crash-day sink", .programs)
struct CrashDaySinkTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Answers `sendMessage` like Telegram, `{"ok":true}`, except 410 for a message that lists a
    /// SOL event (410 Gone: refused for good). Keeps every text it got.
    final class Telegram: Sendable {
        let accepted = Mutex<[String]>([])
        let refused = Mutex<[String]>([])
        let refuse: String

        init(refuse: String) { self.refuse = refuse }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("/botTOKEN/sendMessage") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                let text = object?["text"] as? String ?? ""
                if text.contains(self.refuse) {
                    self.refused.withLock { $0.append(text) }
                    return Response(status: .gone)
                }
                self.accepted.withLock { $0.append(text) }
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"ok":true}"#)))
            }
            return router
        }
    }

    /// One rule of the test: `symbol` crossing below `threshold`, which the ticks do once, at `time`.
    struct Event {
        var rule: String
        var symbol: String
        var threshold: Int
        var time: Int64
        var id: String { "\(rule):\(symbol):\(time)" }
        /// What a chat message shows of it: the rule's default message starts so.
        var text: String { "\(symbol) price crossesBelow \(threshold) " }
    }

    /// 2026-11-24T12:00:00Z, 13:00 in Berlin: day time.
    static let noon: Int64 = 1_795_521_600_000
    /// 2026-11-24T22:30:00Z, 23:30 in Berlin: inside the 23:00–07:00 quiet window.
    static let night: Int64 = 1_795_559_400_000

    /// A crash of a few minutes: BTC's events span more than one 2-minute group, ETH's and
    /// SOL's one each; the receiver refuses for good every message that lists a SOL event.
    static let day: [Event] = [
        Event(rule: "btc-1", symbol: "BTC", threshold: 99, time: noon + 5_000),
        Event(rule: "btc-2", symbol: "BTC", threshold: 98, time: noon + 20_000),
        Event(rule: "btc-3", symbol: "BTC", threshold: 97, time: noon + 40_000),
        Event(rule: "btc-4", symbol: "BTC", threshold: 96, time: noon + 130_000),
        Event(rule: "btc-5", symbol: "BTC", threshold: 95, time: noon + 150_000),
        Event(rule: "eth-1", symbol: "ETH", threshold: 89, time: noon + 10_000),
        Event(rule: "eth-2", symbol: "ETH", threshold: 88, time: noon + 50_000),
        Event(rule: "sol-1", symbol: "SOL", threshold: 79, time: noon + 15_000),
        Event(rule: "sol-2", symbol: "SOL", threshold: 78, time: noon + 30_000)
    ]
    /// Three events in the night, minutes apart (more than a group window).
    static let nightly: [Event] = [
        Event(rule: "ada-1", symbol: "ADA", threshold: 69, time: night),
        Event(rule: "ada-2", symbol: "ADA", threshold: 68, time: night + 10 * 60_000),
        Event(rule: "ada-3", symbol: "ADA", threshold: 67, time: night + 20 * 60_000)
    ]

    /// `Rules/crash-day.json` as shipped, with `rules` replaced by one rule per event.
    static func ruleFile(_ events: [Event]) throws -> Data {
        let shipped = try Data(contentsOf: repo.appendingPathComponent("Rules/crash-day.json"))
        var file = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
        file["rules"] = events.map { event -> [String: Any] in
            ["id": event.rule, "symbol": event.symbol, "when": ["price": ["crossesBelow": event.threshold]]]
        }
        return try JSONSerialization.data(withJSONObject: file)
    }

    /// Each symbol starts 1 above its first threshold a second before its first event; each event's
    /// tick is half a unit below its threshold, so it crosses exactly that one.
    static func ticks(_ events: [Event]) -> String {
        var lines: [(Int64, String)] = []
        for symbol in Set(events.map(\.symbol)) {
            let mine = events.filter { $0.symbol == symbol }.sorted { $0.time < $1.time }
            lines.append(
                (
                    mine[0].time - 1_000,
                    #"{"time": \#(mine[0].time - 1_000), "symbol": "\#(symbol)", "price": \#(mine[0].threshold + 1)}"#
                ))
            for event in mine {
                lines.append(
                    (
                        event.time,
                        #"{"time": \#(event.time), "symbol": "\#(symbol)", "price": \#(Double(event.threshold) - 0.5)}"#
                    ))
            }
        }
        return lines.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: "\n") + "\n"
    }

    /// The digests notify-v1 §4 makes of `events` for `group: {window: 2m, by: [symbol]}`: per
    /// symbol, the first event opens one at `t0`, later ones before `t0 + 2m` join it.
    static func expectedGroups(_ events: [Event]) -> [[String]] {
        var groups: [[Event]] = []
        for event in events.sorted(by: { $0.time < $1.time }) {
            if let index = groups.lastIndex(where: { $0[0].symbol == event.symbol }),
                event.time < groups[index][0].time + 120_000
            {
                groups[index].append(event)
            } else {
                groups.append([event])
            }
        }
        return groups.map { $0.map(\.id) }
    }

    /// The ids of the events a chat message lists, in its order; fails on a line it cannot place.
    static func ids(in text: String, of events: [Event]) throws -> [String] {
        var lines = text.split(separator: "\n").map(String.init)
        if lines.count > 1 || lines[0].hasPrefix("pricealert: ") {
            let headline = lines.removeFirst()
            #expect(headline.hasPrefix("pricealert: \(lines.count) alerts"), "\(text)")
        }
        return try lines.map { line in
            let matching = events.filter { line.contains($0.text) }
            try #require(matching.count == 1, "\(line)")
            if lines.count > 1 || text.hasPrefix("pricealert: ") { #expect(line.hasPrefix("[\(matching[0].rule)] ")) }
            return matching[0].id
        }
    }

    @Test func groupsPacesHoldsAndJournalsAsDocumented() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-crashday-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.ruleFile(Self.day + Self.nightly).write(to: dir.appendingPathComponent("crash-day.json"))
        try Self.ticks(Self.day).write(to: dir.appendingPathComponent("day.jsonl"), atomically: true, encoding: .utf8)
        try Self.ticks(Self.nightly).write(
            to: dir.appendingPathComponent("night.jsonl"), atomically: true, encoding: .utf8)

        let telegram = Telegram(refuse: "SOL price")
        let (dayRun, nightRun, dayAccepted, dayRefused, nightAccepted) = try await LoopbackServer.with(
            telegram.router()
        ) { port in
            let environment = ["TELEGRAM_BOT_URL": "http://127.0.0.1:\(port)/botTOKEN/sendMessage?chat_id=42"]
            let dayRun = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "crash-day.json", "--ticks", "day.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir, environment: environment)
            let (accepted, refused) = (telegram.accepted.withLock { $0 }, telegram.refused.withLock { $0 })
            let nightRun = try await PriceAlertBinary.run(
                [
                    "replay", "--rules", "crash-day.json", "--ticks", "night.jsonl",
                    "--dispatch", "--state", "state"
                ], in: dir, environment: environment)
            return (
                dayRun, nightRun, accepted, refused, Array(telegram.accepted.withLock { $0 }.dropFirst(accepted.count))
            )
        }
        // The refused messages are dead letters on the telegram sink, so the day's replay exits 74.
        #expect(dayRun.status == 74, "\(dayRun.stderr)")
        #expect(nightRun.status == 0, "\(nightRun.stderr)")

        // Day: every event reaches the receiver or the journal, exactly once in all.
        let journal = try String(contentsOf: dir.appendingPathComponent("undelivered.jsonl"), encoding: .utf8)
        // One line per delivery the stages made (a backlog batch's are written one by one).
        var lines: [[String]] = []
        for line in journal.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["kind"] as? String == "digest" {
                lines.append(try #require(object["events"] as? [[String: Any]]).compactMap { $0["id"] as? String })
            } else {
                lines.append([try #require(object["id"] as? String)])
            }
        }
        let journaled = lines.flatMap { $0 }
        let received = try dayAccepted.map { try Self.ids(in: $0, of: Self.day) }
        let refused = try dayRefused.map { try Self.ids(in: $0, of: Self.day) }
        #expect((received.flatMap { $0 } + journaled).sorted() == Self.day.map(\.id).sorted())
        #expect(refused.flatMap { $0 }.sorted() == journaled.sorted())
        #expect(Self.day.filter { $0.symbol == "SOL" }.allSatisfy { journaled.contains($0.id) })

        // Grouped by symbol within 2 minutes: every message carries whole groups (a backlog batch
        // may carry several), and there are fewer messages than groups' worth of events.
        let groups = Self.expectedGroups(Self.day)
        #expect(groups.count == 4)
        for message in received + refused {
            let whole = groups.filter { group in group.contains { message.contains($0) } }
            #expect(Set(whole.flatMap { $0 }) == Set(message), "\(message)")
        }
        #expect((received + refused).count <= groups.count)
        #expect(lines.allSatisfy { groups.contains($0) }, "\(lines)")

        // Night: held, then delivered together as one digest marked held when the window ends
        // (here, at the end of the replay).
        #expect(nightAccepted.count == 1, "\(nightAccepted)")
        let held = try #require(nightAccepted.first)
        #expect(held.hasPrefix("pricealert: 3 alerts held in quiet hours, "), "\(held)")
        #expect(try Self.ids(in: held, of: Self.nightly) == Self.nightly.map(\.id))
        #expect(nightRun.stderr.contains("3 events held by quiet hours"), "\(nightRun.stderr)")
    }
}
