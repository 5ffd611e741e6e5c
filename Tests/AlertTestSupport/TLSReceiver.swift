// Raw SwiftNIO with NIOSSL, not Hummingbird: each connection is decided on its own, before TLS
// (reset it, or serve it with the certificate of the moment), which no server library offers.
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTPS server on 127.0.0.1 (port 0) whose transport and certificate misbehave on purpose:
/// the first `resetting` connections get a TCP reset as the TLS handshake begins (as while a
/// load balancer restarts), the others a TLS server with the certificate set last (`serve(_:)`,
/// so one can expire and be renewed), which answers every request 200 with `body` and closes the
/// connection. It counts connections and answers (a handshake the client refused is no request)
/// and keeps each request's method, path and body.
public final class TLSReceiver: Sendable {
    public struct Counts: Sendable {
        /// Connections accepted, reset or not.
        public var connections = 0
        public var resets = 0
        /// `METHOD /path body` of each request answered, in order.
        public var requests: [String] = []
    }

    private struct State {
        var context: NIOSSLContext
        var resetsLeft: Int
        var counts = Counts()
    }

    private let state: Mutex<State>
    private let listener = BoundChannel()
    /// What every request is answered with (`application/json`).
    let reply: String
    /// Requests answered.
    public let answered = EventCounter()

    public init(serving served: PrivateCA.Served, body: String = "ok", resetting: Int = 0) throws {
        state = Mutex(State(context: try Self.context(served), resetsLeft: resetting))
        reply = body
    }

    /// Runs `body` with a receiver serving `served` (resetting the first `resetting` connections)
    /// and its port; stops it afterwards, also when `body` throws.
    public static func with<T>(
        _ served: PrivateCA.Served, resetting: Int = 0,
        _ body: (TLSReceiver, Int) async throws -> T
    ) async throws -> T {
        let receiver = try TLSReceiver(serving: served, resetting: resetting)
        let port = try await receiver.start()
        do {
            let result = try await body(receiver, port)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    /// New connections get this certificate from now on.
    public func serve(_ served: PrivateCA.Served) throws {
        let context = try Self.context(served)
        state.withLock { $0.context = context }
    }

    public var current: Counts { state.withLock { $0.counts } }

    /// Starts listening; returns the port.
    public func start() async throws -> Int {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let context: NIOSSLContext? = self.state.withLock { state in
                    state.counts.connections += 1
                    guard state.resetsLeft > 0 else { return state.context }
                    state.resetsLeft -= 1
                    state.counts.resets += 1
                    return nil
                }
                guard let context else {
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Reset())
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Answer(receiver: self))
                }
            }
        return try await listener.bind(bootstrap)
    }

    public func stop() async {
        await listener.close()
    }

    fileprivate func received(_ request: String) {
        state.withLock { $0.counts.requests.append(request) }
        answered.record()
    }

    private static func context(_ served: PrivateCA.Served) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(served.certificate).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: served.key, format: .pem)))
        return try NIOSSLContext(configuration: configuration)
    }
}

/// Resets the connection (RST, not FIN) when the client's first bytes (its TLS hello) arrive:
/// the client has connected and started the handshake, and gets no answer to it.
private final class Reset: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let channel = context.channel
        // SO_LINGER with a zero timeout: close() sends RST instead of FIN.
        guard let socket = channel as? any SocketOptionProvider else { return channel.close(promise: nil) }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Answers each request 200 with the receiver's reply once it has been read whole, then closes
/// the connection. `@unchecked Sendable`: it runs only on its channel's event loop.
private final class Answer: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let receiver: TLSReceiver
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(receiver: TLSReceiver) {
        self.receiver = receiver
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let head else { return }
            receiver.received("\(head.method.rawValue) \(head.uri) \(String(decoding: body, as: UTF8.self))")
            let reply = ByteBuffer(string: receiver.reply)
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "\(reply.readableBytes)")
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "connection", value: "close")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(reply))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            self.head = nil
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that refuses the certificate ends the handshake: close quietly.
        context.close(promise: nil)
    }
}
