import AlertHTTP
import AlertModel
import AlertPolicy
import AlertSinks
import Foundation
import Testing

/// What a person receives (Docs/sinks.md#what-a-person-reads): resolved events and reminders
/// read as such in every preset and the text listing; chat messages fit their platform's limit,
/// escaped as it needs, with no mention taken from the text.
@Suite("what a person receives")
struct ReceiverTextTests {
    /// `BTC price outside [40000, 45000] (price …)`: the rule's default message.
    static func outside(
        _ kind: AlertKind, price: Double, reminder: Int? = nil, time: Int64 = 1_700_000_000_000
    ) -> Alert {
        Alert(
            rule: "btc-band", symbol: "BTC", time: time, price: price, condition: "price outside [40000, 45000]",
            threshold: .range(40000, 45000), value: price, template: MessageTemplate.defaultTemplate,
            notify: ["a"], kind: kind, reminder: reminder)
    }

    static let resolved = outside(.resolved, price: 43000)
    static let reminder = outside(.reminder, price: 46000, reminder: 2)

    func object(_ body: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    /// The text each chat preset shows, and ntfy's title and tag.
    func chatTexts(_ alert: Alert) throws -> (texts: [String], title: String?, tag: String?) {
        let slack = try object(WebhookPayload.slack.render(alert).body)["text"] as? String ?? ""
        let discord = try object(WebhookPayload.discord.render(alert).body)["content"] as? String ?? ""
        let telegram = try object(WebhookPayload.telegram(chatID: "1").render(alert).body)["text"] as? String ?? ""
        let (ntfy, headers) = WebhookPayload.ntfy.render(alert)
        return (
            [slack, discord, telegram, ntfy], headers.first { $0.name == "Title" }?.value,
            headers.first { $0.name == "Tags" }?.value
        )
    }

    @Test func aResolvedEventSaysResolvedEverywhere() throws {
        let alert = Self.resolved
        #expect(alert.message == "BTC price outside [40000, 45000] (price 43000)")
        let (texts, title, tag) = try chatTexts(alert)
        #expect(texts.allSatisfy { $0 == "resolved: BTC price outside [40000, 45000] (price 43000)" }, "\(texts)")
        #expect(title == "pricealert: resolved: btc-band BTC")
        #expect(tag == "white_check_mark")
        #expect(
            AlertFormat.text(alert)
                == "2023-11-14T22:13:20.000Z [btc-band] resolved: BTC price outside [40000, 45000] (price 43000)")
        let digest = Digest(sink: "chat", events: [Self.outside(.alert, price: 46000, time: 1_699_999_000_000), alert])
        let lines = try object(WebhookPayload.slack.render(digest).body)["text"] as? String ?? ""
        #expect(lines.contains("\n[btc-band] resolved: BTC price outside"), "\(lines)")
        #expect(lines.contains("\n[btc-band] BTC price outside [40000, 45000] (price 46000)"), "\(lines)")
    }

    @Test func aReminderSaysWhichReminderItIs() throws {
        let (texts, title, tag) = try chatTexts(Self.reminder)
        #expect(texts.allSatisfy { $0 == "reminder 2: BTC price outside [40000, 45000] (price 46000)" }, "\(texts)")
        #expect(title == "pricealert: reminder 2: btc-band BTC")
        #expect(tag == "chart_with_upwards_trend")
        #expect(
            AlertFormat.text(Self.reminder).hasSuffix(
                "[btc-band] reminder 2: BTC price outside [40000, 45000] (price 46000)"))
    }

    /// The JSON event keeps the rule's message: `kind` and `reminder` say the rest.
    @Test func theJSONEventKeepsItsMessageAndKind() throws {
        let json = try object(AlertFormat.json(Self.resolved))
        #expect(json["kind"] as? String == "resolved")
        #expect(json["message"] as? String == "BTC price outside [40000, 45000] (price 43000)")
    }

    @Test func templatesGetTheKindAndTheReminderNumber() {
        let template = WebhookPayload.template("{{kind}} #{{ reminder }} {{symbol}}")
        #expect(template.render(Self.reminder).body == "reminder #2 BTC")
        #expect(template.render(Self.resolved).body == "resolved #0 BTC")
        #expect(template.render(Self.outside(.alert, price: 46000)).body == "alert #0 BTC")
        let message = Alert(
            rule: "r", symbol: "ETH", time: 0, price: 1, condition: "price above 0", threshold: .value(0),
            value: 1, template: "{{symbol}} {{kind}} {{reminder}}", notify: [], kind: .reminder, reminder: 7)
        #expect(message.message == "ETH reminder 7")
    }

    @Test func alertmanagerWebhookResolvesAndEnds() throws {
        let body = try object(WebhookPayload.alertmanagerWebhook.render(Self.resolved).body)
        #expect(body["status"] as? String == "resolved")
        let alert = try #require((body["alerts"] as? [[String: Any]])?.first)
        #expect(alert["status"] as? String == "resolved")
        #expect(alert["endsAt"] as? String == "2023-11-14T22:13:20.000Z")
        #expect(
            (alert["annotations"] as? [String: String])?["summary"]
                == "resolved: BTC price outside [40000, 45000] (price 43000)")
        #expect((alert["annotations"] as? [String: String])?["kind"] == "resolved")
        let firing = try object(WebhookPayload.alertmanagerWebhook.render(Self.reminder).body)
        #expect(firing["status"] as? String == "firing")
        #expect((firing["alerts"] as? [[String: Any]])?.first?["endsAt"] as? String == "0001-01-01T00:00:00Z")
    }

    /// `POST /api/v2/alerts` takes an array of postable alerts; a resolved event ends its alert.
    @Test func alertmanagerPostsWhatItsAPITakes() throws {
        let digest = Digest(
            sink: "am",
            events: [Self.outside(.alert, price: 46000, time: 1_699_999_000_000), Self.reminder, Self.resolved])
        let body = try #require(
            try JSONSerialization.jsonObject(with: Data(WebhookPayload.alertmanager.render(digest).body.utf8))
                as? [[String: Any]])
        #expect(body.count == 3)
        for alert in body {
            #expect(Set(alert.keys).isSubset(of: ["labels", "annotations", "startsAt", "endsAt", "generatorURL"]))
            #expect(
                alert["labels"] as? [String: String] == [
                    "alertname": "btc-band", "symbol": "BTC", "condition": "price outside [40000, 45000]"
                ])
        }
        #expect(body.map { $0["endsAt"] as? String } == [nil, nil, "2023-11-14T22:13:20.000Z"])
        #expect(body.map { ($0["annotations"] as? [String: String])?["kind"] } == ["alert", "reminder", "resolved"])
        #expect((body[1]["annotations"] as? [String: String])?["reminder"] == "2")
        let single = try #require(
            try JSONSerialization.jsonObject(with: Data(WebhookPayload.alertmanager.render(Self.resolved).body.utf8))
                as? [[String: Any]])
        #expect(single.count == 1)
    }

    @Test func ntfyTagsFollowTheMove() throws {
        func tag(_ condition: String, price: Double = 1, threshold: Threshold = .value(0), value: Double = 1) -> String?
        {
            let alert = Alert(
                rule: "r", symbol: "BTC", time: 0, price: price, condition: condition, threshold: threshold,
                value: value, message: "m", notify: [])
            return WebhookPayload.ntfy.render(alert).headers.first { $0.name == "Tags" }?.value
        }
        #expect(tag("price crossesBelow 50000") == "chart_with_downwards_trend")
        #expect(tag("price below 50000") == "chart_with_downwards_trend")
        #expect(tag("price crossesAbove 50000") == "chart_with_upwards_trend")
        #expect(tag("change 1h below -5", value: -6.5) == "chart_with_downwards_trend")
        #expect(tag("change 1h above 5", value: 6.5) == "chart_with_upwards_trend")
        #expect(
            tag("price outside [40000, 45000]", price: 39000, threshold: .range(40000, 45000))
                == "chart_with_downwards_trend")
        #expect(tag("fromHigh 24h below -10", value: -12) == "chart_with_downwards_trend")
        #expect(tag("move percent 5", value: -5.2) == "chart_with_downwards_trend")
        #expect(tag("move step 1000", price: 58990, threshold: .value(59000)) == "chart_with_downwards_trend")
    }

    // MARK: limits

    /// 15 events whose lines are long: more than fits in one Discord message.
    static func longDigest(_ characters: Int, filler: Character = "x") -> Digest {
        Digest(
            sink: "chat",
            events: (1...15).map { index in
                Alert(
                    rule: "r\(index)", symbol: "BTC", time: 1_700_000_000_000 + Int64(index), price: 1,
                    condition: "price above 0",
                    threshold: .value(0), value: 1,
                    message: "event \(index) " + String(repeating: filler, count: characters), notify: [])
            })
    }

    /// The headline's count, the events listed, and the `and N more` count, checked to add up.
    func checkShortened(_ text: String, of digest: Digest) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.removeFirst().hasPrefix("pricealert: \(digest.events.count) alerts"))
        let more = lines.last.flatMap { $0.hasPrefix("and ") ? Int($0.dropFirst(4).prefix { $0.isNumber }) : nil } ?? 0
        if more > 0 { lines.removeLast() }
        #expect(!lines.isEmpty)
        #expect(lines.count + more == digest.events.count, "\(lines.count) listed + \(more) more")
        for (line, event) in zip(lines, digest.events) {
            #expect(line.hasPrefix("[\(event.rule)] event \(event.rule.dropFirst()) "), "\(line)")
        }
    }

    @Test func aDigestIsShortenedToEachPlatformsLimitWithANote() throws {
        let digest = Self.longDigest(220)
        #expect(DigestFormat.chatText(digest).count > 2000)
        let discord = try object(WebhookPayload.discord.render(digest).body)["content"] as? String ?? ""
        #expect(discord.utf16.count <= 2000)
        checkShortened(discord, of: digest)

        let wide = Self.longDigest(450, filler: "é")
        let telegram = try object(WebhookPayload.telegram(chatID: "1").render(wide).body)["text"] as? String ?? ""
        #expect(telegram.utf16.count <= 4096)
        checkShortened(telegram, of: wide)
        let ntfy = WebhookPayload.ntfy.render(wide).body
        #expect(ntfy.utf8.count <= 4096)
        checkShortened(ntfy, of: wide)
        // Bytes, not characters: fewer events fit in ntfy's 4096 bytes than in Telegram's 4096 characters.
        #expect(ntfy.split(separator: "\n").count < telegram.split(separator: "\n").count)
    }

    @Test func aLongSingleMessageIsCutWithAnEllipsis() throws {
        let alert = Alert(
            rule: "long", symbol: "BTC", time: 0, price: 1, condition: "price above 0", threshold: .value(0),
            value: 1, message: String(repeating: "ab€", count: 3000), notify: [])
        let discord = try object(WebhookPayload.discord.render(alert).body)["content"] as? String ?? ""
        #expect(discord.utf16.count == 2000 && discord.hasSuffix("…") && discord.hasPrefix("ab€ab€"))
        let telegram = try object(WebhookPayload.telegram(chatID: "1").render(alert).body)["text"] as? String ?? ""
        #expect(telegram.utf16.count <= 4096 && telegram.utf16.count > 4090 && telegram.hasSuffix("…"))
        let ntfy = WebhookPayload.ntfy.render(alert).body
        #expect(ntfy.utf8.count <= 4096 && ntfy.utf8.count > 4090 && ntfy.hasSuffix("…"))
        let slack = try object(WebhookPayload.slack.render(alert).body)["text"] as? String ?? ""
        #expect(slack == alert.message) // 9000 characters: within Slack's 40 000
        // One event that alone is over the limit still shows, cut, in a digest.
        let digest = Digest(sink: "chat", events: [alert, alert])
        let text = try object(WebhookPayload.discord.render(digest).body)["content"] as? String ?? ""
        #expect(text.utf16.count <= 2000)
        #expect(text.hasSuffix("…\nand 1 more"), "\(text.suffix(40))")
    }

    // MARK: escaping and mentions

    /// A symbol a feed invented, carrying every platform's mention and markup.
    static let hostile = Alert(
        rule: "listing", symbol: "<!CHANNEL>@everyone_*[x](y)&", time: 0, price: 1.5,
        condition: "listed", threshold: .none, value: 1.5,
        template: "{{symbol}} listed <!channel> @here", notify: [])

    @Test func slackEscapesItsControlCharacters() throws {
        let text = try object(WebhookPayload.slack.render(Self.hostile).body)["text"] as? String ?? ""
        #expect(text == "&lt;!CHANNEL&gt;@everyone_*[x](y)&amp; listed &lt;!channel&gt; @here")
    }

    @Test func discordMentionsNoOne() throws {
        let body = try object(WebhookPayload.discord.render(Self.hostile).body)
        #expect(body["allowed_mentions"] as? NSDictionary == ["parse": [String]()])
        let content = body["content"] as? String ?? ""
        #expect(!content.contains("@everyone") && !content.contains("@here"))
        #expect(content.replacingOccurrences(of: "\u{200B}", with: "") == Self.hostile.message)
        let digest = try object(
            WebhookPayload.discord.render(Digest(sink: "d", events: [Self.hostile, Self.hostile])).body)
        #expect(!(digest["content"] as? String ?? "").contains("@everyone"))
    }

    @Test func telegramEscapesForTheParseModeOfItsURL() async throws {
        /// The text and `parse_mode` of the body a telegram sink with this URL query sends.
        func sent(_ query: String) throws -> [String] {
            let sink = try WebhookSink(
                name: "tg",
                spec: WebhookSpec(
                    url: .inline("https://api.telegram.org/bot1:X/sendMessage?\(query)"),
                    preset: "telegram"),
                client: CurlHTTPClient(), environment: { _ in nil })
            let request = sink.request(for: Self.hostile)
            #expect(request.url == "https://api.telegram.org/bot1:X/sendMessage")
            let body = try object(String(decoding: request.body, as: UTF8.self))
            return [body["text"] as? String ?? "", body["parse_mode"] as? String ?? "-"]
        }
        #expect(try sent("chat_id=5") == [Self.hostile.message, "-"])
        #expect(
            try sent("chat_id=5&parse_mode=HTML") == [
                "&lt;!CHANNEL&gt;@everyone_*[x](y)&amp; listed &lt;!channel&gt; @here", "HTML"
            ])
        #expect(
            try sent("parse_mode=MarkdownV2&chat_id=5")
                == [#"<\!CHANNEL\>@everyone\_\*\[x\]\(y\)& listed <\!channel\> @here"#, "MarkdownV2"])
        #expect(
            try sent("chat_id=5&parse_mode=Markdown") == [
                #"<!CHANNEL>@everyone\_\*\[x](y)& listed <!channel> @here"#, "Markdown"
            ])
        #expect(throws: SinkError.self) { _ = try sent("chat_id=5&parse_mode=markdownv3") }
    }

    /// Escapes count towards the limit, and a cut never splits one.
    @Test func escapesAreNeverCutInHalf() throws {
        let alert = Alert(
            rule: "r", symbol: "BTC", time: 0, price: 1, condition: "price above 0", threshold: .value(0),
            value: 1, message: String(repeating: "a.", count: 3000), notify: [])
        let text = ChatText.telegram(.markdownV2).event(alert)
        #expect(text.utf16.count <= 4096 && text.hasSuffix("…"))
        #expect(text.dropLast().hasSuffix("\\.") || text.dropLast().hasSuffix("a"))
        let html = ChatText.telegram(.html).event(
            Alert(
                rule: "r", symbol: "B", time: 0, price: 1, condition: "c", threshold: .none,
                value: 1, message: String(repeating: "<&", count: 3000), notify: []))
        #expect(html.utf16.count <= 4096)
        #expect(html.dropLast().hasSuffix("&lt;") || html.dropLast().hasSuffix("&amp;"), "\(html.suffix(10))")
    }
}
