// Written by hand, not swift-websocket's client: that client answers every ping and hides pong
// and close frames, and a keep-alive test needs a client that can stay silent and see them all.
import NIOCore
import NIOPosix
public import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// A websocket client that does only what a test tells it: the handshake, then text frames
/// out and every frame in (pings are answered only with `answerPings`).
///
/// ```swift
/// try await RawWebSocket.connect(port: port, path: "/ws") { socket in
///     try await socket.send(#"{"method":"SUBSCRIBE","params":["btcusdt@ticker"],"id":1}"#)
///     while case .text(let text) = try await socket.next() { … }
/// }
/// ```
public struct RawWebSocket {
    public enum Event: Sendable, Equatable {
        case text(String)
        case ping([UInt8])
        case pong([UInt8])
        /// A close frame (code and reason; nil code for an empty close frame).
        case close(code: UInt16?, reason: String)
        /// The connection ended without a close frame; `reset` when by a TCP reset.
        case ended(reset: Bool)
    }

    public struct HandshakeFailed: Error, CustomStringConvertible {
        public var response: String
        public var description: String { "websocket handshake refused: \(response)" }
    }

    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var buffer = ByteBuffer()
    private var ended = false
    /// Answer each ping with a pong carrying its payload.
    public var answerPings: Bool

    /// Connects to 127.0.0.1:`port`, upgrades `path` and runs `body`; the connection is closed
    /// when `body` returns. With `tls`, over TLS to `serverHostname`.
    public static func connect<T: Sendable>(
        port: Int, path: String, answerPings: Bool = false, tls: NIOSSLContext? = nil,
        serverHostname: String? = nil, _ body: (inout RawWebSocket) async throws -> T
    ) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var socket = RawWebSocket(
                inbound: inbound.makeAsyncIterator(), outbound: outbound, answerPings: answerPings)
            try await socket.handshake(port: port, path: path)
            return try await body(&socket)
        }
    }

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        answerPings: Bool
    ) {
        self.inbound = inbound
        self.outbound = outbound
        self.answerPings = answerPings
    }

    private mutating func handshake(port: Int, path: String) async throws {
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try await outbound.write(ByteBuffer(string: request))
        while true {
            let view = buffer.readableBytesView
            if let end = view.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
                buffer.moveReaderIndex(forwardBy: end.upperBound - view.startIndex)
                guard head.hasPrefix("HTTP/1.1 101") else { throw HandshakeFailed(response: head) }
                return
            }
            guard try await read() else {
                throw HandshakeFailed(response: String(buffer: buffer))
            }
        }
    }

    /// Reads more bytes; false at the end of the connection.
    private mutating func read() async throws -> Bool {
        guard var more = try await inbound.next() else { return false }
        buffer.writeBuffer(&more)
        return true
    }

    /// The next frame from the server, or `.ended` once the connection is gone (and from then on).
    public mutating func next() async throws -> Event {
        while !ended {
            if let frame = parse() {
                switch frame.opcode {
                case 0x1, 0x0: return .text(String(decoding: frame.payload, as: UTF8.self))
                case 0x2: return .text(String(decoding: frame.payload, as: UTF8.self))
                case 0x9:
                    if answerPings { try await write(opcode: 0xA, frame.payload) }
                    return .ping(frame.payload)
                case 0xA: return .pong(frame.payload)
                case 0x8:
                    let p = frame.payload
                    let code = p.count >= 2 ? UInt16(p[0]) << 8 | UInt16(p[1]) : nil
                    let reason = p.count > 2 ? String(decoding: p[2...], as: UTF8.self) : ""
                    try? await write(opcode: 0x8, Array(p.prefix(2)))
                    return .close(code: code, reason: reason)
                default: continue
                }
            }
            do {
                if try await !read() {
                    ended = true
                    return .ended(reset: false)
                }
            } catch let error as IOError where error.errnoCode == ECONNRESET {
                ended = true
                return .ended(reset: true)
            }
        }
        return .ended(reset: false)
    }

    /// The next text message, skipping pings and pongs; nil when the connection closed or ended.
    public mutating func nextText() async throws -> String? {
        while true {
            switch try await next() {
            case .text(let text): return text
            case .ping, .pong: continue
            case .close, .ended: return nil
            }
        }
    }

    private mutating func parse() -> (opcode: UInt8, payload: [UInt8])? {
        let bytes = buffer.readableBytesView
        guard bytes.count >= 2 else { return nil }
        let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
        var header = 2
        var length = Int(b1 & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[bytes.startIndex + 2]) << 8 | Int(bytes[bytes.startIndex + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[bytes.startIndex + $1]) }
            header = 10
        }
        let masked = b1 & 0x80 != 0
        let maskLength = masked ? 4 : 0
        guard bytes.count >= header + maskLength + length else { return nil }
        let mask = Array(bytes[(bytes.startIndex + header)..<(bytes.startIndex + header + maskLength)])
        var payload = Array(
            bytes[(bytes.startIndex + header + maskLength)..<(bytes.startIndex + header + maskLength + length)])
        if masked { for i in payload.indices { payload[i] ^= mask[i % 4] } }
        buffer.moveReaderIndex(forwardBy: header + maskLength + length)
        return (b0 & 0x0F, payload)
    }

    /// Sends a text frame.
    public func send(_ text: String) async throws {
        try await write(opcode: 0x1, Array(text.utf8))
    }

    /// Sends a pong frame (unsolicited, or answering a ping by hand).
    public func pong(_ payload: [UInt8]) async throws {
        try await write(opcode: 0xA, payload)
    }

    /// Sends a masked frame, as a client must.
    private func write(opcode: UInt8, _ payload: [UInt8]) async throws {
        var frame = ByteBuffer()
        frame.writeInteger(0x80 | opcode)
        if payload.count < 126 {
            frame.writeInteger(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.writeInteger(UInt8(0x80 | 126))
            frame.writeInteger(UInt16(payload.count))
        } else {
            frame.writeInteger(UInt8(0x80 | 127))
            frame.writeInteger(UInt64(payload.count))
        }
        let mask: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame.writeBytes(mask)
        frame.writeBytes(payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        try await outbound.write(frame)
    }
}
