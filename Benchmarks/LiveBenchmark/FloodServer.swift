// On SwiftNIO rather than Hummingbird: Hummingbird's websocket writer sends and flushes one frame
// at a time through an actor, so the flood servers cost about as much CPU as the client they
// feed on the same two cores. Here the frames are encoded once (Coinbase's numbered ones as
// they go) and written many at a time, one flush each 64 KiB or so, as an exchange's server
// fills its TCP segments.
import AlertHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// A flood server on 127.0.0.1: websocket upgrades on `PREFIX + path` of a pool start that
/// pool's flood once the client's first text message (its subscribe) arrives and `mayStart`
/// says so; every other HTTP request is answered by `rest` (the embedded exchange).
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
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, path: String)
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
                                .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel), path: head.uri)
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
                        case .websocket(let channel, let path): try? await flood(channel, path: path)
                        case .http(let channel): try? await answer(channel)
                        case nil: break
                        }
                    }
                }
            }
        }
    }

    private func flood(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, path: String) async throws {
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
                        var batch: [WebSocketFrame] = []
                        while !Task.isCancelled {
                            var size = 0
                            batch.removeAll(keepingCapacity: true)
                            while size < 1 << 16 {
                                let data = pool.buffer(sent)
                                size += data.readableBytes
                                batch.append(WebSocketFrame(fin: true, opcode: .text, data: data))
                                sent += 1
                            }
                            // One hop to the event loop a batch, and the next batch only once this
                            // one is in the socket: the async writer would take batches faster
                            // than a busy event loop writes them, and hold them all in memory.
                            let frames = batch
                            try await socket.eventLoop.flatSubmit {
                                for frame in frames.dropLast() { socket.write(frame, promise: nil) }
                                return socket.writeAndFlush(frames[frames.count - 1])
                            }.get()
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
