// Raw SwiftNIO, as HostileExchange: a test drives each websocket connection by hand (send a
// frame, ping, close, reset) and reads what the client sent, which no server library exposes.
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// An exchange on 127.0.0.1 (port 0) whose REST answers are fixed bodies and whose websocket
/// connections a test drives one by one: it waits for the n-th connection, reads the text
/// messages the client sent on it (subscribes, application pings), sends frames, websocket
/// pings (and counts the client's pongs), closes cleanly or resets.
///
/// REST: `rest` maps a path (without query) to a body, answered 200; other paths 404. Every
/// request's path with query is kept in `requests`. Websocket: any request with
/// `Upgrade: websocket`, whatever its path (kept in `ScriptedConnection.path`).
public final class ScriptedExchange: Sendable {
    let rest: [String: [UInt8]]
    private let listener = BoundChannel()
    private let state = Mutex<(connections: [ScriptedConnection], requests: [String])>(([], []))
    let opened = EventCounter()
    let requested = EventCounter()

    public init(rest: [String: [UInt8]]) {
        self.rest = rest
    }

    public func start() async throws -> Int {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedHandler(exchange: self))
                }
            }
        return try await listener.bind(bootstrap)
    }

    public func stop() async {
        for connection in state.withLock({ $0.connections }) { connection.reset() }
        await listener.close()
    }

    /// REST requests so far, paths with query, in order.
    public var requests: [String] { state.withLock { $0.requests } }

    /// The `n`-th websocket connection (from 1), once it is open.
    public func connection(_ n: Int, timeout: Duration = .seconds(60)) async throws -> ScriptedConnection {
        try await opened.wait(for: n, timeout: timeout)
        return state.withLock { $0.connections[n - 1] }
    }

    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Waits until `n` REST requests arrived.
    public func waitForRequests(_ n: Int, timeout: Duration = .seconds(60)) async throws {
        try await requested.wait(for: n, timeout: timeout)
    }

    func add(_ connection: ScriptedConnection) {
        state.withLock { $0.connections.append(connection) }
        opened.record()
    }

    func request(_ path: String) {
        state.withLock { $0.requests.append(path) }
        requested.record()
    }
}

/// One websocket connection of a `ScriptedExchange`.
public final class ScriptedConnection: Sendable {
    public let path: String
    let channel: any Channel
    private let received = Mutex<(texts: [String], pongs: Int, closed: Bool)>(([], 0, false))
    let textCount = EventCounter()
    let pongCount = EventCounter()
    let closedEvent = EventCounter()

    init(path: String, channel: any Channel) {
        self.path = path
        self.channel = channel
    }

    /// The text messages the client sent, in order.
    public var texts: [String] { received.withLock { $0.texts } }
    public var pongs: Int { received.withLock { $0.pongs } }
    public var isClosed: Bool { received.withLock { $0.closed } }

    /// Waits until the client sent `n` text messages; returns them all.
    @discardableResult
    public func waitForTexts(_ n: Int, timeout: Duration = .seconds(60)) async throws -> [String] {
        try await textCount.wait(for: n, timeout: timeout)
        return texts
    }

    public func waitForPongs(_ n: Int, timeout: Duration = .seconds(60)) async throws {
        try await pongCount.wait(for: n, timeout: timeout)
    }

    /// Waits until the connection is closed (by either side).
    public func waitUntilClosed(timeout: Duration = .seconds(60)) async throws {
        try await closedEvent.wait(for: 1, timeout: timeout)
    }

    public func send(_ text: String) {
        channel.writeAndFlush(ByteBuffer(bytes: HostileConnection.frame(opcode: 1, Array(text.utf8))), promise: nil)
    }

    /// A websocket ping frame with `payload` (the client must answer with a pong).
    public func ping(_ payload: String = "keepalive") {
        channel.writeAndFlush(ByteBuffer(bytes: HostileConnection.frame(opcode: 9, Array(payload.utf8))), promise: nil)
    }

    /// A close frame (1000), then the TCP connection closed: the clean end of a connection.
    public func close() {
        let frame = HostileConnection.frame(opcode: 8, [0x03, 0xE8])
        let channel = self.channel
        channel.writeAndFlush(ByteBuffer(bytes: frame)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// A TCP reset, no close frame.
    public func reset() {
        guard let socket = channel as? any SocketOptionProvider else { return channel.close(promise: nil) }
        let channel = self.channel
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    func receivedText(_ text: String) {
        received.withLock { $0.texts.append(text) }
        textCount.record()
    }

    func receivedPong() {
        received.withLock { $0.pongs += 1 }
        pongCount.record()
    }

    func ended() {
        let first = received.withLock { r in
            defer { r.closed = true }
            return !r.closed
        }
        if first { closedEvent.record() }
    }
}

final class ScriptedHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls the handler on its channel's event loop only; its state is touched
    // nowhere else.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let exchange: ScriptedExchange
    private var head = ""
    private var connection: ScriptedConnection?
    private var pending: [UInt8] = []
    private var fragments: [UInt8] = []

    init(exchange: ScriptedExchange) {
        self.exchange = exchange
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection?.ended()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        if connection != nil {
            pending += bytes
            readFrames(context: context)
            return
        }
        head += String(decoding: bytes, as: UTF8.self)
        guard let end = head.range(of: "\r\n\r\n") else { return }
        let lines = head[..<end.lowerBound].split(separator: "\r\n")
        let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        var key: String?
        for line in lines.dropFirst() where line.lowercased().hasPrefix("sec-websocket-key:") {
            key = String(line.dropFirst("sec-websocket-key:".count)).trimmingCharacters(in: .whitespaces)
        }
        if let key {
            context.writeAndFlush(
                wrapOutboundOut(
                    ByteBuffer(bytes: HostileConnection.switching(accept: HostileConnection.accept(for: key)))),
                promise: nil)
            let connection = ScriptedConnection(path: target, channel: context.channel)
            self.connection = connection
            exchange.add(connection)
            return
        }
        exchange.request(target)
        let path = String(target.split(separator: "?", maxSplits: 1).first ?? "")
        let (status, body) = exchange.rest[path].map { ("200 OK", $0) } ?? ("404 Not Found", Array("{}".utf8))
        var response = Array(
            "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        response += body
        let loop = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: response))).whenComplete { _ in
            loop.value.close(promise: nil)
        }
    }

    /// Reads the client's (masked) frames from `pending`.
    private func readFrames(context: ChannelHandlerContext) {
        while pending.count >= 2 {
            let opcode = pending[0] & 0x0F
            let fin = pending[0] & 0x80 != 0
            var length = Int(pending[1] & 0x7F)
            var offset = 2
            if length == 126 {
                guard pending.count >= 4 else { return }
                length = Int(pending[2]) << 8 | Int(pending[3])
                offset = 4
            } else if length == 127 {
                guard pending.count >= 10 else { return }
                length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
                offset = 10
            }
            let masked = pending[1] & 0x80 != 0
            let maskStart = offset
            if masked { offset += 4 }
            guard pending.count >= offset + length else { return }
            var payload = Array(pending[offset..<offset + length])
            if masked {
                let mask = Array(pending[maskStart..<maskStart + 4])
                for i in payload.indices { payload[i] ^= mask[i % 4] }
            }
            pending.removeFirst(offset + length)
            switch opcode {
            case 0, 1:
                fragments += payload
                if fin {
                    connection?.receivedText(String(decoding: fragments, as: UTF8.self))
                    fragments = []
                }
            case 8: context.close(promise: nil)
            case 9:
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(bytes: HostileConnection.frame(opcode: 10, payload))), promise: nil)
            case 10: connection?.receivedPong()
            default: break
            }
        }
    }
}

extension ScriptedExchange {
    /// Looks at `condition` every 10 ms, for up to a minute (for what the exchange cannot count:
    /// lines a child process writes).
    public func waitUntil(_ what: String, timeout: Duration = .seconds(60), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw WaitedTooLong(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    public struct WaitedTooLong: Error, CustomStringConvertible {
        public var what: String
        public var description: String { "scripted exchange: waited a minute for \(what)" }
    }
}
