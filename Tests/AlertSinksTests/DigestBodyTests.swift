import AlertHTTP
import AlertModel
import AlertPolicy
import AlertSinks
import Foundation
import Platform
import Testing

/// Digest bodies of every preset (Docs/sinks.md#digests), parsed back and checked against the
/// events they carry.
@Suite("digest bodies")
struct DigestBodyTests {
    init() { ProcessSetUp.atStart() }

    /// 13 events of two rules on two symbols, one second apart.
    static let events = (0..<13).map { index in
        sampleAlert(index % 2 == 0 ? "btc-100k" : "eth-dip", time: 1_700_000_000_000 + Int64(index) * 1_000)
    }
    static let digest = Digest(sink: "chat", events: events)

    func object(_ body: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    @Test func jsonIsTheDigestObjectWithEveryEvent() throws {
        let (body, headers) = WebhookPayload.json.render(Self.digest)
        let json = try object(body)
        #expect(json["kind"] as? String == "digest")
        #expect(json["id"] as? String == "digest:chat:\(Self.events[0].id)")
        #expect(json["sink"] as? String == "chat")
        #expect(json["count"] as? Int == 13)
        #expect(json["first"] as? String == Timestamp.format(Self.events[0].time))
        #expect(json["last"] as? String == Timestamp.format(Self.events[12].time))
        #expect(json["held"] as? Bool == false)
        let events = try #require(json["events"] as? [[String: Any]])
        #expect(events.map { $0["id"] as? String } == Self.events.map(\.id))
        #expect(events.map { $0["message"] as? String } == Self.events.map(\.message))
        #expect(headers.first { $0.name == "Content-Type" }?.value == "application/json")
        let held = try object(WebhookPayload.json.render(Digest(sink: "chat", events: Self.events, held: true)).body)
        #expect(held["held"] as? Bool == true)
    }

    @Test func alertmanagerWebhookSendsOnePayloadWithEveryEventAsAnAlert() throws {
        let json = try object(WebhookPayload.alertmanagerWebhook.render(Self.digest).body)
        #expect(json["version"] as? String == "4")
        #expect(json["groupKey"] as? String == Self.digest.id)
        let alerts = try #require(json["alerts"] as? [[String: Any]])
        #expect(alerts.count == 13)
        #expect(alerts.map { ($0["labels"] as? [String: String])?["alertname"] } == Self.events.map(\.rule))
        #expect(alerts.map { $0["startsAt"] as? String } == Self.events.map { Timestamp.format($0.time) })
        // Two rules: the common labels are those both share, and the group names no rule.
        #expect(
            json["commonLabels"] as? [String: String] == ["condition": "price crossesAbove 100000", "symbol": "BTC"])
        #expect((json["groupLabels"] as? [String: String])?.isEmpty == true)
        // A one-rule digest is grouped by that rule.
        let oneRule = Digest(sink: "chat", events: Self.events.filter { $0.rule == "eth-dip" })
        let grouped = try object(WebhookPayload.alertmanagerWebhook.render(oneRule).body)
        #expect(grouped["groupLabels"] as? [String: String] == ["alertname": "eth-dip"])
    }

    /// One message: the headline, ten events, "and 3 more".
    func checkChatText(_ text: String, held: Bool = false) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = Timestamp.format(Self.events[0].time), last = Timestamp.format(Self.events[12].time)
        #expect(
            lines.first == "pricealert: 13 alerts" + (held ? " held in quiet hours, " : ", ") + "\(first) to \(last)")
        // The sample message holds a newline: each event is its rule and its message.
        let expected = Self.events.prefix(10).map { "[\($0.rule)] \($0.message)" }.joined(separator: "\n")
        #expect(lines.dropFirst().dropLast().joined(separator: "\n") == expected)
        #expect(lines.last == "and 3 more")
    }

    @Test func chatPresetsSendOneMessageOfTenEventsAndTheRestCounted() throws {
        checkChatText(try object(WebhookPayload.slack.render(Self.digest).body)["text"] as? String ?? "")
        checkChatText(try object(WebhookPayload.discord.render(Self.digest).body)["content"] as? String ?? "")
        let telegram = try object(WebhookPayload.telegram(chatID: "-100200").render(Self.digest).body)
        #expect(telegram["chat_id"] as? String == "-100200")
        checkChatText(telegram["text"] as? String ?? "")
        let (ntfy, headers) = WebhookPayload.ntfy.render(Self.digest)
        checkChatText(ntfy)
        #expect(headers.first { $0.name == "Title" }?.value == "pricealert: 13 alerts")
        let held = Digest(sink: "chat", events: Self.events, held: true)
        checkChatText(try object(WebhookPayload.slack.render(held).body)["text"] as? String ?? "", held: true)
    }

    @Test func aShortDigestListsEveryEventWithoutMore() throws {
        let digest = Digest(sink: "chat", events: Array(Self.events.prefix(3)))
        let text = try object(WebhookPayload.slack.render(digest).body)["text"] as? String ?? ""
        #expect(!text.contains("more"))
        #expect(text.components(separatedBy: "[btc-100k]").count - 1 == 2)
    }

    @Test func aWebhookPostsTheDigestWithItsIdToARealReceiver() async throws {
        let request = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let sink = try WebhookSink(
                name: "chat", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook/digest")),
                client: client, environment: { _ in nil }, now: { 0 })
            #expect(await sink.send(Self.digest) == .delivered)
            return try #require(receiver.requests.first)
        }
        #expect(request.headers["webhook-id"] == Self.digest.id)
        #expect(request.text == DigestFormat.json(Self.digest))
    }

    @Test func anExecSinkGetsTheDigestJSONOnStdin() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/notify.sh"
        try writeExecutable(
            path,
            "#!/bin/sh\ncat > \"$1/stdin.json\"\nprintf '%s %s' \"$PRICEALERT_ID\" \"$PRICEALERT_COUNT\" > \"$1/env\"\n"
        )
        let result = try await ExecSink(name: "page", spec: ExecSpec(command: [path, folder])).send(Self.digest)
        #expect(result == .delivered)
        let stdin = try String(contentsOfFile: folder + "/stdin.json", encoding: .utf8)
        #expect(stdin.hasSuffix("\n"))
        let json = try object(stdin)
        #expect(json["kind"] as? String == "digest")
        #expect((json["events"] as? [[String: Any]])?.map { $0["id"] as? String } == Self.events.map(\.id))
        #expect(try String(contentsOfFile: folder + "/env", encoding: .utf8) == "\(Self.digest.id) 13")
    }
}
