// Set up on SwiftNIO rather than through swift-websocket's `WebSocketClient.connect`, which keeps
// the channel to itself: an upgrade the server never answers (or closes without answering) could
// then neither time out nor be cancelled, and a rejected upgrade left the connection open, reading.
import AlertHTTP
import AlertModel
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Platform
import Synchronization
@_spi(WSInternal) import WSCore

/// One websocket connection of a feed. Guarantees: the TCP connection and the upgrade finish
/// within `handshakeTimeout` or the attempt fails; cancelling the calling task closes the
/// connection at any stage; the channel is closed however the attempt ends; a frame longer than
/// `maxFrameSize` is never buffered (its header is enough to reject it) and ends the connection
/// with `Failure.frameTooLarge`.
struct FeedSocket: Sendable {
    /// How an attempt failed, in words for the reconnect log line.
    enum Failure: Error, CustomStringConvertible {
        case invalidURL
        case handshakeTimedOut(Duration)
        case closedBeforeUpgrade
        case resetBeforeUpgrade
        case upgradeRejected(String)
        case frameTooLarge(limit: Int)
        /// The connection or its TLS handshake failed: `NIOFailure`'s words.
        case connection(String)

        var description: String {
            switch self {
            case .invalidURL: "not a ws:// or wss:// URL"
            case .handshakeTimedOut(let limit): "no websocket upgrade within \(DurationText.format(limit.milliseconds))"
            case .closedBeforeUpgrade: "the server closed the connection before answering the websocket upgrade"
            case .resetBeforeUpgrade: "the server reset the connection before answering the websocket upgrade"
            case .upgradeRejected(let why): "websocket upgrade rejected: \(why)"
            case .frameTooLarge(let limit): "a frame longer than \(limit >> 20) MiB: rejected unread, connection closed"
            case .connection(let why): why
            }
        }
    }

    struct Context: WebSocketContext {
        let logger: Logger
    }

    typealias Handler = @Sendable (WebSocketInboundStream, WebSocketOutboundWriter, Context) async throws -> Void

    let url: String
    let maxFrameSize: Int
    let handshakeTimeout: Duration
    let logger: Logger

    /// Connects, upgrades, runs `handler` on the connection and returns when the connection ends
    /// (the server closed it, or `handler` returned).
    func run(_ handler: @escaping Handler) async throws {
        guard let target = URLTarget(url, schemes: .websocket) else { throw Failure.invalidURL }
        let attempt = Attempt()
        let tls = target.secure ? try ClientTLS.context() : nil
        defer { attempt.close() }
        try await withTaskCancellationHandler {
            do {
                let upgraded = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.nanoseconds(handshakeTimeout.nanoseconds))
                    .connect(host: target.host, port: target.port) { channel in
                        setUp(channel, target: target, tls: tls, attempt: attempt)
                    }
                switch try await upgraded.get() {
                case .websocket(let channel):
                    let configuration = WebSocketHandler.Configuration(
                        extensions: [], autoPing: .disabled, closeTimeout: .seconds(1), validateUTF8: false,
                        maxFrameSize: maxFrameSize)
                    _ = try await WebSocketHandler.handle(
                        type: .client, configuration: configuration, asyncChannel: channel,
                        context: Context(logger: logger), handler: handler)
                case .notUpgraded:
                    throw Failure.upgradeRejected(attempt.answer ?? "no HTTP 101 Switching Protocols")
                }
            } catch {
                throw attempt.explain(error, timeout: handshakeTimeout, limit: maxFrameSize, host: target.host)
            }
            if attempt.outcome.oversized { throw Failure.frameTooLarge(limit: maxFrameSize) }
        } onCancel: {
            attempt.close()
        }
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case notUpgraded
    }

    /// The pipeline of a new channel, and its upgrade as a future that fails when the channel
    /// closes or the deadline passes first (NIO's upgrade handler waits for an answer for good).
    private func setUp(
        _ channel: any Channel, target: URLTarget, tls: NIOSSLContext?,
        attempt: Attempt
    ) -> EventLoopFuture<EventLoopFuture<Upgrade>> {
        attempt.attach(channel)
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(handshakeTimeout.nanoseconds)) {
            attempt.timeOut()
        }
        let maxFrameSize = self.maxFrameSize
        return channel.eventLoop.makeCompletedFuture {
            if let tls {
                try ClientTLS.addHandlers(
                    tls, host: target.host, isAddress: target.isAddress, failure: attempt.tlsFailure,
                    to: channel.pipeline.syncOperations)
            }
            let upgrader = JudgedUpgrader(
                attempt: attempt,
                inner: NIOTypedWebSocketClientUpgrader<Upgrade>(
                    maxFrameSize: maxFrameSize, enableAutomaticErrorHandling: true
                ) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(FrameErrorWatch(attempt: attempt))
                        return .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                })
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: target.hostHeader)
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
            let upgrade = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                upgradeRequestHead: head, upgraders: [upgrader],
                notUpgradingCompletionHandler: { $0.eventLoop.makeSucceededFuture(.notUpgraded) })
            var configuration = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrade)
            configuration.leftOverBytesStrategy = .forwardBytes
            let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                configuration: configuration)
            let upgradeHandler = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPClientUpgradeHandler<Upgrade>.self)
            try channel.pipeline.syncOperations.addHandler(
                ResponseStatusWatch(attempt: attempt), position: .before(upgradeHandler))
            let settled = channel.eventLoop.makePromise(of: Upgrade.self)
            upgraded.cascade(to: settled)
            channel.closeFuture.whenComplete { _ in settled.fail(Failure.closedBeforeUpgrade) }
            settled.futureResult.whenComplete { _ in deadline.cancel() }
            return settled.futureResult
        }
    }
}

/// What one attempt learnt, shared between the event loop and the task that runs it.
private final class Attempt: Sendable {
    struct Outcome {
        var channel: (any Channel)?
        var closing = false
        var timedOut = false
        var oversized = false
        var status: UInt?
        var wrongAccept = false
    }

    private let state = Mutex(Outcome())
    /// Why the TLS handshake failed, when it did.
    let tlsFailure = TLSFailure()

    var outcome: Outcome { state.withLock { $0 } }

    /// Keeps the channel to close it later; closes it at once when the attempt already ended.
    func attach(_ channel: any Channel) {
        let closing = state.withLock { s in
            s.channel = channel
            return s.closing
        }
        if closing { channel.close(promise: nil) }
    }

    func close() {
        let channel = state.withLock { s in
            s.closing = true
            return s.channel
        }
        channel?.close(promise: nil)
    }

    func timeOut() {
        state.withLock { $0.timedOut = true }
        close()
    }

    func sawFrameTooLarge() { state.withLock { $0.oversized = true } }
    func answered(status: UInt) { state.withLock { $0.status = $0.status ?? status } }
    func sawWrongAccept() { state.withLock { $0.wrongAccept = true } }

    /// The server's answer to the upgrade, when it was not a valid one.
    var answer: String? {
        let s = outcome
        if s.wrongAccept { return "HTTP 101 with a Sec-WebSocket-Accept that does not match the key sent" }
        if let status = s.status, status != 101 { return "HTTP \(status) instead of 101 Switching Protocols" }
        return nil
    }

    /// The error an attempt that failed with `error` reports: what really happened, not the
    /// channel error it surfaced as.
    func explain(_ error: any Error, timeout: Duration, limit: Int, host: String) -> any Error {
        let s = outcome
        if s.oversized { return FeedSocket.Failure.frameTooLarge(limit: limit) }
        // A failed handshake closes the channel: say why, not that it closed.
        if let reason = tlsFailure.reason { return FeedSocket.Failure.connection(reason) }
        if s.timedOut { return FeedSocket.Failure.handshakeTimedOut(timeout) }
        if let answer { return FeedSocket.Failure.upgradeRejected(answer) }
        if case ChannelError.connectTimeout = error { return FeedSocket.Failure.handshakeTimedOut(timeout) }
        // Connected, then gone without an answer: NIO reports the upgrade as abandoned.
        if s.channel?.isActive == false, s.status == nil, error is ChannelError || error is FeedSocket.Failure {
            return FeedSocket.Failure.closedBeforeUpgrade
        }
        if s.status == nil, let io = error as? IOError, io.errnoCode == ECONNRESET {
            return FeedSocket.Failure.resetBeforeUpgrade
        }
        if error is FeedSocket.Failure || error is CancellationError { return error }
        return FeedSocket.Failure.connection(NIOFailure.explain(error, host: host).1)
    }
}

/// The websocket upgrader, noting why it refused an answer (only a boolean reaches NIO).
private struct JudgedUpgrader<Result: Sendable>: NIOTypedHTTPClientProtocolUpgrader {
    typealias UpgradeResult = Result
    let attempt: Attempt
    let inner: NIOTypedWebSocketClientUpgrader<Result>

    var supportedProtocol: String { inner.supportedProtocol }
    var requiredUpgradeHeaders: [String] { inner.requiredUpgradeHeaders }
    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        inner.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        let allowed = inner.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
        if !allowed { attempt.sawWrongAccept() }
        return allowed
    }

    func upgrade(channel: any Channel, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Result> {
        inner.upgrade(channel: channel, upgradeResponse: upgradeResponse)
    }
}

/// Notes the status of the upgrade's answer, then leaves the pipeline (after the upgrade the
/// channel carries websocket frames, which it must not see).
private final class ResponseStatusWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    let attempt: Attempt

    init(attempt: Attempt) {
        self.attempt = attempt
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        context.fireChannelRead(data)
        if case .head(let head) = part {
            attempt.answered(status: head.status.code)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// Notes a frame rejected for its length (NIO's decoder reports it from the header; its error
/// handler then closes the connection with 1009).
private final class FrameErrorWatch: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    let attempt: Attempt

    init(attempt: Attempt) {
        self.attempt = attempt
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case NIOWebSocketError.invalidFrameLength = error { attempt.sawFrameTooLarge() }
        context.fireErrorCaught(error)
    }
}
