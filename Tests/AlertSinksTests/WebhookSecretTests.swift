import AlertHTTP
import AlertModel
import AlertSinks
import AlertTestSupport
import Foundation
import Logging
import Testing

/// No secret (URL token, query token, signing key) reaches a result reason, a setup error or a
/// log line (STYLE lesson 7).
@Suite("webhook secrets never leak")
struct WebhookSecretTests {
    static let pathToken = "T0KEN-in-path-9f8e7d"
    static let queryToken = "qt-5a4b3c2d1e"
    static let signingSecret = "sign-6b5a4c3d2e1f"
    static let secrets = [pathToken, queryToken, signingSecret]

    func assertClean(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in Self.secrets {
            #expect(!text.contains(secret), "leaked \(secret) in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func resultsAndLogsCarryNoSecret() async throws {
        let logs = CapturingLogHandler()
        let alert = sampleAlert()
        let reasons = try await Receiver.with { _, port in
            let client = CurlHTTPClient(logger: logs.logger(label: "pricealert.http"))
            var reasons: [String] = []
            for path in ["/status/500", "/status/401", "/sleep/2000"] {
                let env = [
                    "HOOK_URL":
                        "http://user:\(Self.pathToken)@127.0.0.1:\(port)\(path)/\(Self.pathToken)?token=\(Self.queryToken)",
                    "HOOK_SECRET": Self.signingSecret
                ]
                let spec = WebhookSpec(url: .environment("HOOK_URL"), timeout: 300, secret: .environment("HOOK_SECRET"))
                let sink = try WebhookSink(
                    name: "ops", spec: spec, client: client, environment: { env[$0] },
                    logger: logs.logger(label: "pricealert.sink.webhook"))
                let dispatcher = Dispatcher(sinks: ["ops": sink], logger: logs.logger(label: "pricealert.dispatch"))
                let results = await dispatcher.dispatch(
                    Alert(
                        rule: alert.rule, symbol: alert.symbol, time: alert.time,
                        price: alert.price, condition: alert.condition,
                        threshold: alert.threshold, value: alert.value,
                        message: alert.message, notify: ["ops"]))
                reasons += results.compactMap { $0.result.failureReason }
            }
            // Connection refused: the transport error names the (redacted) URL.
            let refused = ["HOOK_URL": "http://127.0.0.1:1/\(Self.pathToken)?token=\(Self.queryToken)"]
            let sink = try WebhookSink(
                name: "ops", spec: WebhookSpec(url: .environment("HOOK_URL")), client: client,
                environment: { refused[$0] }, logger: logs.logger(label: "pricealert.sink.webhook"))
            if let reason = await sink.send(alert).failureReason { reasons.append(reason) }
            return reasons
        }
        #expect(reasons.count == 4)
        for reason in reasons { assertClean(reason) }
        #expect(!logs.records.isEmpty)
        for record in logs.records {
            assertClean(record.message)
            for value in record.metadata.values { assertClean(value) }
        }
    }

    @Test func setupErrorsNameTheVariableOrFileNotTheValue() throws {
        let client = CurlHTTPClient()
        func error(_ spec: WebhookSpec, env: [String: String] = [:]) -> String {
            do {
                _ = try WebhookSink(name: "ops", spec: spec, client: client, environment: { env[$0] })
                return "no error"
            } catch {
                return error.description
            }
        }
        let missing = error(WebhookSpec(url: .environment("HOOK_URL")))
        #expect(missing == "webhook sink 'ops': url variable HOOK_URL is not set or empty")
        let empty = error(WebhookSpec(url: .environment("HOOK_URL")), env: ["HOOK_URL": ""])
        #expect(empty.contains("HOOK_URL"))
        let unreadable = error(WebhookSpec(url: .file("/nonexistent/hook-url")))
        #expect(unreadable.hasPrefix("webhook sink 'ops': cannot read url file /nonexistent/hook-url: "))
        let notHTTP = error(WebhookSpec(url: .environment("HOOK_URL")), env: ["HOOK_URL": "ftp://\(Self.pathToken)"])
        let secretMissing = error(WebhookSpec(url: .inline("http://127.0.0.1/x"), secret: .environment("HOOK_SECRET")))
        #expect(secretMissing == "webhook sink 'ops': secret variable HOOK_SECRET is not set or empty")
        let badWhsec = error(
            WebhookSpec(url: .inline("http://127.0.0.1/x"), secret: .environment("S")),
            env: ["S": "whsec_!!\(Self.signingSecret)"])
        for text in [missing, empty, unreadable, notHTTP, secretMissing, badWhsec] {
            #expect(text.hasPrefix("webhook sink 'ops': "))
            assertClean(text)
        }
    }
}
