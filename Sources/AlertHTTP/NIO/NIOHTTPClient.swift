// Written on SwiftNIO, which the websocket feeds already load, rather than on async-http-client:
// the feeds' REST requests need one GET at a time and none of its pooling, HTTP/2 or proxies.
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `HTTPClient` over SwiftNIO, HTTP/1.1: the feeds' REST requests (market lists, snapshots,
/// candles), so a daemon without webhook sinks never loads libcurl.
///
/// The same policy as `CurlHTTPClient`: TLS peer and host verification always on (`caFile`,
/// else the roots `ClientTLS` names: `SSL_CERT_FILE`, `SSL_CERT_DIR`, the system's); redirects never followed (a 3xx is a response like any other);
/// `timeout` bounds the whole request, `connectTimeout` the TCP connection; the body is read up
/// to `responseLimit`, the headers up to `ResponseLimit.maxHeaderBytes`; errors and log lines
/// carry only `RedactedURL` forms of URLs; cancelling the task ends the request at once with
/// "request cancelled". Each request has its own connection (`Connection: close`), on NIO's
/// shared event loops. A URL with `user:password@` is refused: no REST source sends credentials
/// that way.
public final class NIOHTTPClient: HTTPClient {
    /// The feeds' client.
    public static let shared = NIOHTTPClient()

    private let logger: Logger

    public init(logger: Logger = Logger(label: "pricealert.http")) {
        self.logger = logger
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let redacted = RedactedURL.redact(request.url)
        let result: Result<HTTPResponse, HTTPError>
        do {
            let exchange = try Exchange(request: request, redactedURL: redacted)
            result = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    exchange.start(continuation)
                }
            } onCancel: {
                exchange.finish(.failure(HTTPError(kind: .other, url: redacted, reason: "request cancelled")))
            }
        } catch {
            result = .failure(error)
        }
        if case .failure(let error) = result {
            logger.debug(
                "HTTP request failed",
                metadata: [
                    "url": "\(error.url)", "kind": "\(error.kind)", "reason": "\(error.reason)"
                ])
        }
        return try result.get()
    }

}

/// One request, from the connection to its result, shared by the task that waits, the event
/// loop and the timer: whichever ends it first wins, and the connection is closed then.
private final class Exchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?
        var result: Result<HTTPResponse, HTTPError>?
        var channel: (any Channel)?
        var deadline: Scheduled<Void>?
    }

    let request: HTTPRequest
    let target: URLTarget
    let redactedURL: String
    let tls: NIOSSLContext?
    /// Why the TLS handshake failed, when it did.
    let tlsFailure = TLSFailure()
    let started = NIODeadline.now()
    private let state = Mutex(State())

    init(request: HTTPRequest, redactedURL: String) throws(HTTPError) {
        try request.checkMethodAndHeaders(redactedURL: redactedURL)
        guard let target = URLTarget(request.url, schemes: .http) else {
            throw .invalid("not an http:// or https:// URL with a host", redactedURL: redactedURL)
        }
        guard !target.hasUserInfo else {
            throw .invalid("user:password@ in the URL is not supported", redactedURL: redactedURL)
        }
        self.request = request
        self.target = target
        self.redactedURL = redactedURL
        tls = target.secure ? try Self.tlsContext(caFile: request.caFile, redactedURL: redactedURL) : nil
    }

    private static func tlsContext(caFile: String?, redactedURL: String) throws(HTTPError) -> NIOSSLContext {
        do {
            return try ClientTLS.context(caFile: caFile)
        } catch {
            throw HTTPError(kind: .tls, url: redactedURL, reason: error.reason)
        }
    }

    /// Connects and sends; the result reaches `continuation` once, however the request ends.
    func start(_ continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>) {
        let group = MultiThreadedEventLoopGroup.singleton
        let ended = state.withLock { state -> Result<HTTPResponse, HTTPError>? in
            if state.result == nil { state.continuation = continuation }
            return state.result
        }
        if let ended {
            continuation.resume(returning: ended)
            return
        }
        let timeout = max(request.timeout, 1)
        let deadline = group.next().scheduleTask(in: .milliseconds(timeout)) { [self] in
            finish(
                .failure(
                    HTTPError(
                        kind: .timeout, url: redactedURL,
                        reason: "no complete response within \(timeout) ms")))
        }
        state.withLock { $0.deadline = deadline }
        ClientBootstrap(group: group)
            .connectTimeout(.milliseconds(min(max(request.connectTimeout, 1), timeout)))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try setUp(channel)
                }
            }
            .connect(host: target.host, port: target.port)
            .whenComplete { [self] connected in
                switch connected {
                case .success(let channel): attach(channel)
                case .failure(let error): finish(.failure(describe(error)))
                }
            }
    }

    private func setUp(_ channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        if let tls {
            try ClientTLS.addHandlers(
                tls, host: target.host, isAddress: target.isAddress, failure: tlsFailure, to: pipeline)
        }
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = ResponseLimit.maxHeaderBytes
        limits.maxHeaderFieldSize = ResponseLimit.maxHeaderBytes
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(
                    leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .drop, limitConfiguration: limits)
            ))
        try pipeline.addHandler(ResponseReader(exchange: self))
    }

    /// Keeps the connected channel to close it when the request ends (at once if it already has).
    private func attach(_ channel: any Channel) {
        let ended = state.withLock { state -> Bool in
            state.channel = channel
            return state.result != nil
        }
        if ended { channel.close(promise: nil) }
    }

    /// Ends the request with `result` unless it has ended already; closes the connection.
    func finish(_ result: Result<HTTPResponse, HTTPError>) {
        let (continuation, channel, deadline) = state.withLock { state in
            guard state.result == nil else {
                return (
                    CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?.none, (any Channel)?.none,
                    Scheduled<Void>?.none
                )
            }
            state.result = result
            defer { state.continuation = nil }
            return (state.continuation, state.channel, state.deadline)
        }
        deadline?.cancel()
        channel?.close(promise: nil)
        continuation?.resume(returning: result)
    }

    func fail(_ reason: String, kind: HTTPError.Kind = .other) {
        finish(.failure(HTTPError(kind: kind, url: redactedURL, reason: reason)))
    }

    /// Seconds since the request started.
    var seconds: Double {
        Double((NIODeadline.now() - started).nanoseconds) / 1e9
    }

    /// The request's error for what NIO reported; names hosts and ports, never the URL's path.
    func describe(_ error: any Error) -> HTTPError {
        let (kind, reason) = NIOFailure.explain(error, tls: tlsFailure, host: target.host)
        return HTTPError(kind: kind, url: redactedURL, reason: reason)
    }
}

/// Writes the request when the connection is up and collects the response within its limits.
/// Event loop only.
private final class ResponseReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: Exchange
    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    init(exchange: Exchange) {
        self.exchange = exchange
    }

    func channelActive(context: ChannelHandlerContext) {
        let request = exchange.request
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: exchange.target.hostHeader)
        headers.add(name: "User-Agent", value: HTTPRequest.userAgent)
        headers.add(name: "Connection", value: "close")
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        if request.sendsBody { headers.replaceOrAdd(name: "Content-Length", value: String(request.body.count)) }
        let head = HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: request.method),
            uri: exchange.target.path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !request.body.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: request.body)))),
                promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            headers = head.headers.map { (name: $0.name.lowercased(), value: $0.value) }
        case .body(var part):
            let limit = exchange.request.responseLimit
            let room = limit.bytes - body.count
            if part.readableBytes > room {
                body += part.readBytes(length: room) ?? []
                if limit.truncates {
                    succeed()
                } else {
                    exchange.fail("response body larger than \(sizeText(limit.bytes)), the limit for this request")
                }
                return
            }
            body += part.readableBytesView
        case .end:
            succeed()
        }
    }

    private func succeed() {
        exchange.finish(
            .success(HTTPResponse(status: status, headers: headers, body: body, duration: exchange.seconds)))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        exchange.finish(.failure(exchange.describe(error)))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange.fail("the server closed the connection before the response was complete")
        context.fireChannelInactive()
    }
}
