import AlertHTTP
import AlertModel
import AlertSinks
import AlertTestSupport
import Crypto
import Foundation
import Testing

/// The webhook sink against a real receiver on 127.0.0.1: bodies, headers, signatures, outcomes.
@Suite("webhook sink")
struct WebhookSinkTests {
    let alert = sampleAlert()

    func sink(
        _ spec: WebhookSpec, client: any HTTPClient, env: [String: String] = [:],
        now: Int64 = 1_700_000_000_000
    ) throws -> WebhookSink {
        try WebhookSink(name: "ops", spec: spec, client: client, environment: { env[$0] }, now: { now })
    }

    func json(_ request: Receiver.Request) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
    }

    /// Sends `alert` through a sink with `spec` (its url filled in by `path`) and returns what arrived.
    func deliver(
        _ path: String = "/hook/x", configure: (inout WebhookSpec) -> Void = { _ in }
    ) async throws
        -> (SinkResult, Receiver.Request)
    {
        let alert = self.alert
        var configured = WebhookSpec(url: .inline(""))
        configure(&configured)
        let base = configured
        return try await Receiver.with { receiver, port in
            var spec = base
            spec.url = .inline("http://127.0.0.1:\(port)\(path)")
            let client = CurlHTTPClient()
            let result = try await sink(spec, client: client).send(alert)
            client.shutdown()
            let request = try #require(receiver.requests.first)
            return (result, request)
        }
    }

    @Test func jsonPresetSendsTheSpecEventWithAnId() async throws {
        let (result, request) = try await deliver()
        #expect(result == .delivered)
        #expect(request.method == "POST")
        #expect(request.text == AlertFormat.json(alert))
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["webhook-id"] == alert.id)
        #expect(request.headers["webhook-signature"] == nil)
    }

    @Test func methodAndConfiguredHeaders() async throws {
        let (_, request) = try await deliver { spec in
            spec.method = "PUT"
            spec.headers = ["X-Custom": "yes", "Content-Type": "application/vnd.test+json"]
        }
        #expect(request.method == "PUT")
        #expect(request.headers["x-custom"] == "yes")
        #expect(request.headers["content-type"] == "application/vnd.test+json")
    }

    @Test func slackAndDiscord() async throws {
        let (_, slack) = try await deliver { $0.preset = "slack" }
        #expect(try json(slack) as NSDictionary == ["text": alert.message])
        #expect(slack.headers["content-type"] == "application/json")
        let (_, discord) = try await deliver { $0.preset = "discord" }
        #expect(
            try json(discord) as NSDictionary == ["content": alert.message, "allowed_mentions": ["parse": [String]()]])
    }

    @Test func ntfySendsPlainTextWithTitleAndTags() async throws {
        let (_, request) = try await deliver { $0.preset = "ntfy" }
        #expect(request.text == alert.message)
        #expect(request.headers["title"] == "pricealert: btc-100k BTC")
        #expect(request.headers["tags"] == "chart_with_upwards_trend")
        #expect(request.headers["content-type"] == "text/plain; charset=utf-8")
    }

    @Test func telegramMovesTheChatIdIntoTheBody() async throws {
        let (result, request) = try await deliver("/hook/bot123:ABC/sendMessage?chat_id=-100200&x=1") {
            $0.preset = "telegram"
        }
        #expect(result == .delivered)
        #expect(request.path == "/hook/bot123:ABC/sendMessage")
        #expect(try json(request) as NSDictionary == ["chat_id": "-100200", "text": alert.message])
    }

    @Test func telegramWithoutChatIdIsASetupError() throws {
        let spec = WebhookSpec(url: .inline("https://api.telegram.org/bot1:SECRET/sendMessage"), preset: "telegram")
        #expect(throws: SinkError.self) { try sink(spec, client: CurlHTTPClient()) }
    }

    @Test func alertmanagerWebhookVersion4Payload() async throws {
        let (_, request) = try await deliver { $0.preset = "alertmanager-webhook" }
        let body = try json(request)
        #expect(
            Set(body.keys) == [
                "version", "groupKey", "truncatedAlerts", "status", "receiver", "groupLabels",
                "commonLabels", "commonAnnotations", "externalURL", "alerts"
            ])
        #expect(body["version"] as? String == "4")
        #expect(body["status"] as? String == "firing")
        #expect(body["receiver"] as? String == "pricealert")
        #expect(body["truncatedAlerts"] as? Int == 0)
        #expect(body["groupLabels"] as? NSDictionary == ["alertname": "btc-100k"])
        let alerts = try #require(body["alerts"] as? [[String: Any]])
        #expect(alerts.count == 1)
        let first = alerts[0]
        #expect(
            Set(first.keys) == ["status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"])
        #expect(
            first["labels"] as? NSDictionary == ["alertname": "btc-100k", "symbol": "BTC", "condition": alert.condition]
        )
        #expect(
            first["annotations"] as? NSDictionary == [
                "summary": alert.message, "value": "100012.5", "threshold": "100000",
                "kind": "alert", "price": "100012.5"
            ])
        #expect(first["startsAt"] as? String == "2023-11-14T22:13:20.000Z")
        #expect(first["endsAt"] as? String == "0001-01-01T00:00:00Z")
        #expect((first["fingerprint"] as? String)?.count == 16)
    }

    @Test func templateBodyIsPlainTextUnlessConfigured() async throws {
        let (_, request) = try await deliver { $0.template = "{{symbol}} at {{ price }} ({{rule}})" }
        #expect(request.text == "BTC at 100012.5 (btc-100k)")
        #expect(request.headers["content-type"] == "text/plain; charset=utf-8")
    }

    /// The receiver's side of Standard Webhooks, computed independently.
    func verify(_ request: Receiver.Request, key: [UInt8]) throws -> Bool {
        let id = try #require(request.headers["webhook-id"])
        let timestamp = try #require(request.headers["webhook-timestamp"])
        let signature = try #require(request.headers["webhook-signature"])
        let signed = Array("\(id).\(timestamp).".utf8) + request.body
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))
        return signature == "v1," + Data(mac).base64EncodedString()
    }

    @Test func signsWithARawSecret() async throws {
        let alert = self.alert
        let (result, request) = try await Receiver.with { receiver, port in
            let spec = WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook/s"), secret: .environment("SIGNING"))
            let result = try await sink(spec, client: CurlHTTPClient(), env: ["SIGNING": "s3cret-value"]).send(alert)
            return (result, try #require(receiver.requests.first))
        }
        #expect(result == .delivered)
        #expect(request.headers["webhook-timestamp"] == "1700000000")
        #expect(try verify(request, key: Array("s3cret-value".utf8)))
        #expect(try !verify(request, key: Array("other".utf8)))
    }

    @Test func signsWithAWhsecSecret() async throws {
        let key: [UInt8] = (0..<24).map { UInt8($0 * 7 + 1) }
        let secret = "whsec_" + Data(key).base64EncodedString()
        let folder = try temporaryFolder()
        try (secret + "\n").write(toFile: folder + "/secret", atomically: true, encoding: .utf8)
        let alert = self.alert
        let request = try await Receiver.with { receiver, port in
            let spec = WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook/s"), secret: .file(folder + "/secret"))
            _ = try await sink(spec, client: CurlHTTPClient()).send(alert)
            return try #require(receiver.requests.first)
        }
        #expect(try verify(request, key: key))
    }

    @Test func statusesMapToDeliveredRetryOrPermanent() async throws {
        let alert = self.alert
        try await Receiver.with { _, port in
            let client = CurlHTTPClient()
            func send(_ path: String) async throws -> SinkResult {
                try await sink(WebhookSpec(url: .inline("http://127.0.0.1:\(port)\(path)")), client: client).send(alert)
            }
            let r204 = try await send("/status/204"), r500 = try await send("/status/500")
            let r429 = try await send("/status/429?retry-after=2"), r400 = try await send("/status/400")
            #expect(r204 == .delivered)
            #expect(r500 == .retry(reason: "webhook sink 'ops': HTTP 500", after: nil))
            #expect(r429 == .retry(reason: "webhook sink 'ops': HTTP 429", after: 2000))
            #expect(r400 == .permanent(reason: "webhook sink 'ops': HTTP 400"))
        }
    }

    /// The peer accepts and never answers: only the sink's timeout can end the send.
    @Test(.timeLimit(.minutes(1))) func timeoutIsRetried() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let spec = WebhookSpec(url: .inline("http://127.0.0.1:\(silent.port)/hook"), timeout: 300)
        let result = try await sink(spec, client: CurlHTTPClient()).send(alert)
        guard case .retry = result else { Issue.record("expected retry, got \(result)"); return }
    }

    @Test func connectionRefusedIsRetried() async throws {
        // Port 1 on loopback: nothing listens there in a test environment.
        let result = try await sink(WebhookSpec(url: .inline("http://127.0.0.1:1/hook")), client: CurlHTTPClient())
            .send(alert)
        guard case .retry(let reason, _) = result else { Issue.record("expected retry, got \(result)"); return }
        #expect(reason.hasPrefix("webhook sink 'ops': "))
    }
}
