// On SwiftNIO rather than Hummingbird: Hummingbird's websocket writer sends and flushes one frame
// at a time through an actor, so the flood servers cost about as much CPU as the client they
// feed on the same two cores. Here the frames are encoded to their wire bytes once (Coinbase's
// numbered ones as they go) and written about 64 KiB at a time, as an exchange's server fills
// its TCP segments.
import AlertHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A flood server on 127.0.0.1: a websocket upgrade on a pool's path starts that pool's flood
/// once the client's first text message (its subscribe) has arrived and `subscribed` returned;
/// every other HTTP request is answered by `rest` (the embedded exchange).
struct FloodServer: Sendable {
    /// The message pools by websocket path.
    let pools: [String: FiveSources.Pool]
    /// Called with the pool's path once its client subscribed; the flood starts when it returns.
    let subscribed: @Sendable (String) async throws -> Void
    /// Called with the pool's path and the messages sent, when its connection ends.
    let finished: @Sendable (String, Int) -> Void
    /// Answers a REST request (its URI) with a status and a body.
    let rest: @Sendable (String) async throws -> (status: Int, body: [UInt8])

    private enum Accepted: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, raw: NIOLoopBound<RawWriter>, path: String)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
    }

    /// Binds a free port and serves until the task is cancelled; `bound` gets the port.
    func run(bound: @Sendable (Int) -> Void) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<Accepted>(
                        // Client frames up to 64 KiB, as the look-alikes take (OKX's subscribe limit).
                        maxFrameSize: 1 << 16,
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                // Frames already encoded go out beside the frame encoder.
                                let encoder = try channel.pipeline.syncOperations.handler(
                                    type: WebSocketFrameEncoder.self)
                                let raw = RawWriter()
                                try channel.pipeline.syncOperations.addHandler(raw, position: .before(encoder))
                                return .websocket(
                                    try NIOAsyncChannel(wrappingChannelSynchronously: channel),
                                    raw: NIOLoopBound(raw, eventLoop: channel.eventLoop),
                                    path: head.uri)
                            }
                        })
                    let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Accepted>(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: upgrade))
                }
            }
        bound(server.channel.localAddress?.port ?? 0)
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask {
                        switch try? await connection.get() {
                        case .websocket(let channel, let raw, let path): try? await flood(channel, raw: raw, path: path)
                        case .http(let channel): try? await answer(channel)
                        case nil: break
                        }
                    }
                }
            }
        }
    }

    private func flood(
        _ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, raw: NIOLoopBound<RawWriter>, path: String
    ) async throws {
        // `/coinbase/` is `/coinbase`'s pool, as a router would have it.
        let path = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let pool = pools[path] else { return }
        let socket = channel.channel
        try await channel.executeThenClose { inbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The flood starts at the first text message; later ones (more subscribes) are
                // read and ignored, as are the client's keep-alive messages.
                var flooding = false
                for try await frame in inbound where frame.opcode == .text && !flooding {
                    flooding = true
                    group.addTask {
                        try await subscribed(path)
                        var sent = 0
                        defer { finished(path, sent) }
                        var next = 0
                        while !Task.isCancelled {
                            let (chunk, frames) = pool.chunk(next)
                            next += 1
                            // The next chunk only once this one is in the socket.
                            try await socket.eventLoop.flatSubmit { raw.value.write(chunk, on: socket.eventLoop) }.get()
                            sent += frames
                        }
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Answers each request on the connection through `rest`, keeping it alive.
    private func answer(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async throws {
        try await channel.executeThenClose { inbound, outbound in
            var uri = ""
            for try await part in inbound {
                switch part {
                case .head(let head): uri = head.uri
                case .body: break
                case .end:
                    let (status, body) = try await rest(uri)
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: "application/json")
                    headers.add(name: "Content-Length", value: String(body.count))
                    try await outbound.write(
                        contentsOf: [
                            .head(
                                HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers)
                            ),
                            .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil)
                        ])
                }
            }
        }
    }
}

/// Writes bytes already encoded as websocket frames, next to the head of the pipeline.
final class RawWriter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes and flushes `bytes`; the future completes once they are in the socket. Call on
    /// the channel's event loop.
    func write(_ bytes: ByteBuffer, on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard let context else { return loop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        return context.writeAndFlush(wrapOutboundOut(bytes))
    }
}

/// A server's unmasked websocket text frame: its header, then `payload`.
func textFrame(_ payload: ByteBuffer, into out: inout ByteBuffer) {
    var payload = payload
    out.writeInteger(UInt8(0x81))
    switch payload.readableBytes {
    case ..<126: out.writeInteger(UInt8(payload.readableBytes))
    case ..<65536:
        out.writeInteger(UInt8(126))
        out.writeInteger(UInt16(payload.readableBytes))
    default:
        out.writeInteger(UInt8(127))
        out.writeInteger(UInt64(payload.readableBytes))
    }
    out.writeBuffer(&payload)
}
