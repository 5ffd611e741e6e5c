import AlertHTTP
import AlertModel
import AlertPolicy
import AlertRules
import Logging
import Platform

/// Posts each alert to an HTTP endpoint (`method`, default POST) through a shared `HTTPClient`.
///
/// Secrets (the URL, the signing secret) are resolved once, in `init`, and are never put in a
/// result reason, an error or a log line: reasons name the sink and the HTTP status, and
/// transport errors carry only `RedactedURL` forms. Every request carries `webhook-id` (the
/// alert id) so receivers can drop retried duplicates; with a secret it is also signed
/// (`WebhookSigner`). The outcome is `HTTPOutcome.classify`'s: 2xx delivered; 408, 425, 429,
/// 5xx, timeouts and connection errors retried (honouring `Retry-After`); the rest permanent.
/// Only the status, the headers and the first 64 KiB of a reply are read (`ResponseLimit.webhook`),
/// and `timeout` bounds the whole exchange, so a receiver that answers slowly or endlessly
/// costs a bounded wait and bounded memory.
public struct WebhookSink: Sink {
    public let name: String
    private let url: String
    private let method: String
    private let headers: [(name: String, value: String)]
    private let timeout: Int64
    private let caFile: String?
    private let payload: WebhookPayload
    private let signer: WebhookSigner?
    private let client: any HTTPClient
    private let now: @Sendable () -> Int64
    private let logger: Logger

    /// Resolves the URL and secret (`environment` for `urlEnv`/`secretEnv`); throws naming the
    /// sink and the variable or file when one is missing, empty or unreadable.
    /// `now`: epoch milliseconds (signature timestamps, `Retry-After` dates).
    public init(
        name: String, spec: WebhookSpec, client: any HTTPClient,
        environment: @escaping EnvironmentLookup = Secrets.processEnvironment,
        now: @escaping @Sendable () -> Int64 = Wallclock.millis,
        logger: Logger = Logger(label: "pricealert.sink.webhook")
    ) throws(SinkError) {
        self.name = name
        var url = try Secrets.resolve(spec.url, sink: name, what: "url", environment: environment)
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw SinkError(sink: name, description: "webhook sink '\(name)': url must be http or https")
        }
        if let template = spec.template {
            payload = .template(template)
        } else {
            switch spec.preset {
            case "slack": payload = .slack
            case "discord": payload = .discord
            case "ntfy": payload = .ntfy
            case "alertmanager": payload = .alertmanager
            case "alertmanager-webhook": payload = .alertmanagerWebhook
            case "telegram":
                guard let (rest, chatID) = Self.takeQueryParameter("chat_id", from: url), !chatID.isEmpty else {
                    throw SinkError(
                        sink: name,
                        description:
                            "webhook sink '\(name)': the telegram preset needs the chat id in the url: https://api.telegram.org/bot<token>/sendMessage?chat_id=<id>"
                    )
                }
                url = rest
                var parseMode: String?
                if let (rest, mode) = Self.takeQueryParameter("parse_mode", from: url) {
                    guard WebhookPayload.telegramParseModes[mode] != nil else {
                        throw SinkError(
                            sink: name,
                            description:
                                "webhook sink '\(name)': the url's parse_mode must be HTML, MarkdownV2 or Markdown, not \(UserText.single(mode))"
                        )
                    }
                    url = rest
                    parseMode = mode
                }
                payload = .telegram(chatID: chatID, parseMode: parseMode)
            default: payload = .json
            }
        }
        if let source = spec.secret {
            let secret = try Secrets.resolve(source, sink: name, what: "secret", environment: environment)
            guard let signer = WebhookSigner(secret: secret) else {
                throw SinkError(
                    sink: name, description: "webhook sink '\(name)': the whsec_ secret is not valid base64")
            }
            self.signer = signer
        } else {
            signer = nil
        }
        self.url = url
        self.method = spec.method
        self.headers = spec.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        self.timeout = spec.timeout
        self.caFile = spec.caFile
        self.client = client
        self.now = now
        self.logger = logger
    }

    /// The request `send` makes for `alert` (also used by tests and `sinks test`).
    public func request(for alert: Alert) -> HTTPRequest {
        let (body, defaults) = payload.render(alert)
        return request(id: alert.id, body: body, defaults: defaults)
    }

    /// The request for a digest: its preset's digest body, `webhook-id` the digest's id.
    public func request(for digest: AlertModel.Digest) -> HTTPRequest {
        let (body, defaults) = payload.render(digest)
        return request(id: digest.id, body: body, defaults: defaults)
    }

    private func request(id: String, body: String, defaults: [(name: String, value: String)]) -> HTTPRequest {
        let bytes = Array(body.utf8)
        var all = defaults.filter { header in !headers.contains { $0.name.lowercased() == header.name.lowercased() } }
        all += headers
        all.append((name: "webhook-id", value: id))
        if let signer {
            let timestamp = now() / 1000
            all.append((name: "webhook-timestamp", value: String(timestamp)))
            all.append((name: "webhook-signature", value: signer.signature(id: id, timestamp: timestamp, body: bytes)))
        }
        return HTTPRequest(
            method: method, url: url, headers: all, body: bytes, timeout: timeout,
            connectTimeout: min(timeout, 5_000), caFile: caFile, responseLimit: .webhook)
    }

    public func send(_ alert: Alert) async -> SinkResult {
        await send(request(for: alert))
    }

    /// Sends a digest as one request (Docs/sinks.md#digests).
    public func send(_ digest: AlertModel.Digest) async -> SinkResult {
        await send(request(for: digest))
    }

    public func send(_ delivery: Delivery) async -> SinkResult {
        switch delivery {
        case .event(let alert): return await send(alert)
        case .digest(let digest): return await send(digest)
        }
    }

    private func send(_ request: HTTPRequest) async -> SinkResult {
        let result: Result<HTTPResponse, HTTPError>
        do { result = .success(try await client.send(request)) } catch { result = .failure(error) }
        switch HTTPOutcome.classify(result, now: now()) {
        case .success:
            return .delivered
        case .retry(let after, let reason):
            logger.debug("webhook delivery failed, retryable", metadata: ["sink": "\(name)", "reason": "\(reason)"])
            return .retry(reason: "webhook sink '\(name)': \(reason)", after: after)
        case .permanent(let reason):
            logger.debug("webhook delivery failed, permanent", metadata: ["sink": "\(name)", "reason": "\(reason)"])
            return .permanent(reason: "webhook sink '\(name)': \(reason)")
        }
    }

    /// `url` without the query parameter `key`, and its (percent-decoded) value; nil if absent.
    static func takeQueryParameter(_ key: String, from url: String) -> (url: String, value: String)? {
        guard let question = url.firstIndex(of: "?") else { return nil }
        let base = url[..<question]
        var query = url[url.index(after: question)...]
        var fragment = ""
        if let hash = query.firstIndex(of: "#") {
            fragment = String(query[hash...])
            query = query[..<hash]
        }
        var value: String?
        var kept: [Substring] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            if value == nil, part.hasPrefix(key + "=") {
                value = percentDecode(part.dropFirst(key.count + 1))
            } else {
                kept.append(part)
            }
        }
        guard let value else { return nil }
        return (String(base) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&")) + fragment, value)
    }

    private static func percentDecode(_ text: Substring) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2,
                let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b == UInt8(ascii: "+") ? UInt8(ascii: " ") : b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension WebhookSink {
    /// The `webhook` kind, for `SinkRegistry.all`: every webhook shares the dependencies' HTTP
    /// client (one connection cache), libcurl's by default.
    public static let sinkType = SinkType(
        WebhookSpec.self,
        keys: [
            "url", "urlEnv", "urlFile", "method", "headers", "timeout", "preset", "template", "secretEnv", "secretFile",
            "caFile"
        ],
        read: WebhookSpec.read,
        make: { name, spec, dependencies in
            try WebhookSink(
                name: name, spec: spec, client: dependencies.httpClient ?? CurlHTTPClient.shared,
                environment: dependencies.environment)
        })
}
