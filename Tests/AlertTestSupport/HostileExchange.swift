// Raw SwiftNIO, not Hummingbird: the misbehaviour is below HTTP (resets, half-answered upgrades,
// bad accept keys, frames no server library would send).
import Crypto
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A BTSE-shaped exchange on 127.0.0.1 (port 0) that misbehaves on purpose, for the feed's tests.
/// REST: the market list at `/futures/api/inquire/initial/market` (as `markets` says), an empty
/// `/spot/api/v3.2/market_summary`, and a Poloniex market list (BTC_USDT) at `/markets`.
/// Websocket: any path under `/ws/` (BTSE's `/ws/futures`, Poloniex's `/ws/public`), answered as
/// `websocket` says.
/// It counts what happened (upgrade attempts, market-list requests, open connections, what it
/// sent), and tests wait on those counts.
public final class HostileExchange: Sendable {
    public enum WebSocket: Sendable {
        /// TCP reset as soon as the upgrade request arrives.
        case reset
        /// Orderly close (FIN) as soon as the upgrade request arrives.
        case close
        /// Reads the upgrade request and never answers.
        case hang
        /// Answers 101 with a wrong `Sec-WebSocket-Accept`, then sends `chunk` bytes every
        /// `every` for as long as the connection stays open (as fast as it drains with `.zero`).
        case badAccept(chunk: Int, every: Duration)
        /// A valid upgrade, then `frames`.
        case accept(Frames)
    }

    public enum Frames: Sendable {
        /// Text frames that are not JSON, a binary frame of noise, then a frame with a reserved
        /// opcode (a protocol error: the client must close).
        case garbage
        /// One binary frame that announces `bytes` and streams them.
        case oversized(bytes: Int)
        /// `coinIndex` frames of `perFrame` symbols never sent before, plus BTC, back to back.
        case symbolFlood(perFrame: Int)
        /// A `coinIndex` frame with BTC every `every`.
        case prices(every: Duration)
        /// `count` BTC frames, one every `every`, then silence with the connection left open:
        /// the client finds the feed stale, reconnects, and gets prices again (a flapping feed).
        case flapping(count: Int, every: Duration)
        /// These text frames, in order; then the connection stays open and quiet.
        case text([String])
    }

    /// How `GET …/ohlcv` (candles) is answered.
    public enum Candles: Sendable {
        /// 404, as before the exchange had candles.
        case notFound
        /// `[]` (no candles) for markets whose name starts with one of `answered` (`BTC-`,
        /// `BTCPFC`); every other candle request is read and never answered.
        case hang(answered: [String])
    }

    public enum Markets: Sendable {
        /// A small valid market list (BTC-USD spot).
        case valid
        /// HTTP 500, empty body.
        case serverError
        /// TCP reset as soon as the request arrives.
        case reset
        /// Headers, then one byte of the body every second.
        case slow
        /// 200 with a body that is not JSON.
        case notJSON
        /// 200 with `bytes` of body (a JSON array of zeros), streamed as fast as it drains.
        case huge(bytes: Int)
    }

    public struct Counts: Sendable {
        /// The paths with query of the candle requests, in order of arrival.
        public var candleRequests: [String] = []
        /// Candle requests held open (`Candles.hang`) whose connection the client has not closed.
        public var candlesHeld = 0
        public var upgradeRequests = 0
        public var marketRequests = 0
        public var openConnections = 0
        public var framesSent = 0
        public var symbolsSent = 0
        public var bytesSent = 0
    }

    let websocket: WebSocket
    let markets: Markets
    let candles: Candles
    private let counts = Mutex(Counts())
    private let listener = BoundChannel()

    public init(websocket: WebSocket, markets: Markets = .valid, candles: Candles = .notFound) {
        self.websocket = websocket
        self.markets = markets
        self.candles = candles
    }

    public var current: Counts { counts.withLock { $0 } }

    func count(_ change: (inout Counts) -> Void) { counts.withLock { change(&$0) } }

    /// Starts listening; returns the port.
    public func start() async throws -> Int {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HostileConnection(exchange: self))
                }
            }
        return try await listener.bind(bootstrap)
    }

    public func stop() async {
        await listener.close()
    }

    /// Waits until `condition` holds of the counts, checking every 20 ms, for up to `timeout`.
    public func wait(
        for what: String, timeout: Duration = .seconds(60),
        until condition: (Counts) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(current) {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what, counts: current) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var what: String
        public var counts: Counts
        public var description: String { "hostile exchange: timed out waiting for \(what); counts: \(counts)" }
    }

    static let poloniexMarkets = #"""
        [{"symbol":"BTC_USDT","baseCurrencyName":"BTC","quoteCurrencyName":"USDT","displayName":"BTC/USDT","state":"NORMAL"}]
        """#

    static let marketList = #"""
        {"code":1,"msg":"success","data":[{"symbol":"BTC","marketName":"BTC-USD","active":true,"future":false,
        "quoteCurrency":"USD","baseCurrency":"BTC"}]}
        """#
}

/// One client connection: reads the request head, then does what the exchange was told to.
/// `@unchecked Sendable`: its methods and every callback it schedules run on its channel's event
/// loop, so its state is never touched from two threads.
final class HostileConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let exchange: HostileExchange
    private var head = ""
    private var answered = false
    private var nextSymbol = 0
    /// A candle request this connection holds open (counted in `candlesHeld` until it closes).
    private var holding = false
    /// Price frames this connection sent.
    private var pricesSent = 0

    init(exchange: HostileExchange) {
        self.exchange = exchange
    }

    func channelActive(context: ChannelHandlerContext) {
        exchange.count { $0.openConnections += 1 }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let held = holding
        exchange.count {
            $0.openConnections -= 1
            if held { $0.candlesHeld -= 1 }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After the answer, what the client sends (subscribe, pings, close) is read and dropped.
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        head += buffer.readString(length: buffer.readableBytes) ?? ""
        guard let end = head.range(of: "\r\n\r\n") else { return }
        answered = true
        let lines = head[..<end.lowerBound].split(separator: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        var key = ""
        for line in lines.dropFirst() where line.lowercased().hasPrefix("sec-websocket-key:") {
            key = line.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces)
        }
        if path.hasPrefix("/ws/") {
            exchange.count { $0.upgradeRequests += 1 }
            answerUpgrade(context: context, key: key)
        } else if path.hasPrefix("/futures/api/inquire/initial/market") {
            exchange.count { $0.marketRequests += 1 }
            answerMarkets(context: context)
        } else if path.contains("/ohlcv?") {
            answerCandles(context: context, path: path)
        } else if path == "/markets" {
            exchange.count { $0.marketRequests += 1 }
            respond(context: context, status: "200 OK", body: HostileExchange.poloniexMarkets)
        } else if path.hasPrefix("/spot/api/v3.2/market_summary") {
            respond(context: context, status: "200 OK", body: "[]")
        } else {
            respond(context: context, status: "404 Not Found", body: "")
        }
    }

    private func answerUpgrade(context: ChannelHandlerContext, key: String) {
        switch exchange.websocket {
        case .reset: reset(context: context)
        case .close: context.close(promise: nil)
        case .hang: break
        case .badAccept(let chunk, let every):
            write(context: context, Self.switching(accept: "bm90IHRoZSBrZXkgeW91IHNlbnQ="))
            stream(context: context, chunk: ByteBuffer(repeating: 0x61, count: chunk), every: every, remaining: .max)
        case .accept(let frames):
            write(context: context, Self.switching(accept: Self.accept(for: key)))
            send(frames, context: context)
        }
    }

    private func send(_ frames: HostileExchange.Frames, context: ChannelHandlerContext) {
        switch frames {
        case .garbage:
            write(context: context, Self.frame(opcode: 1, Array("this is not JSON {{{".utf8)))
            write(context: context, Self.frame(opcode: 1, Array(#"{"topic":"coinIndex","data":[1,2,"#.utf8)))
            write(context: context, Self.frame(opcode: 2, (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
            write(context: context, Self.frame(opcode: 3, Array("reserved opcode".utf8)))
        case .oversized(let bytes):
            var header: [UInt8] = [0x82, 127]
            for shift in stride(from: 56, through: 0, by: -8) {
                header.append(UInt8(truncatingIfNeeded: UInt64(bytes) >> UInt64(shift)))
            }
            write(context: context, header)
            stream(
                context: context, chunk: ByteBuffer(repeating: 0x62, count: 1 << 16), every: .zero,
                remaining: bytes)
        case .text(let frames):
            for text in frames {
                write(context: context, Self.frame(opcode: 1, Array(text.utf8)))
                exchange.count { $0.framesSent += 1 }
            }
        case .symbolFlood(let perFrame):
            floodFrame(context: context, perFrame: perFrame)
        case .prices(let every):
            sendPrices(context: context, every: every, count: .max)
        case .flapping(let count, let every):
            sendPrices(context: context, every: every, count: count)
        }
    }

    /// `count` BTC frames at random prices, one every `every`.
    private func sendPrices(context: ChannelHandlerContext, every: Duration, count: Int) {
        let loop = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(every.nanoseconds)) { task in
            let context = loop.value
            guard context.channel.isActive, self.pricesSent < count else { return task.cancel() }
            self.pricesSent += 1
            let price = 40_000 + Double(Int.random(in: 0..<1000))
            self.write(
                context: context,
                Self.frame(
                    opcode: 1,
                    Array(
                        #"{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":\#(price)}}}"#
                            .utf8)))
            self.exchange.count { $0.framesSent += 1 }
        }
    }

    /// One flood frame, and the next once it is written (so the client's reading paces it).
    private func floodFrame(context: ChannelHandlerContext, perFrame: Int) {
        var json = #"{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":40000}"#
        json.reserveCapacity(perFrame * 72)
        for _ in 0..<perFrame {
            nextSymbol += 1
            let symbol = "FLOOD\(nextSymbol)"
            json += #","\#(symbol)_1":{"id":"\#(symbol)","name":"\#(symbol)","type":1,"price":1.5}"#
        }
        json += "}}"
        let loop = NIOLoopBound(context, eventLoop: context.eventLoop)
        let bytes = Self.frame(opcode: 1, Array(json.utf8))
        exchange.count { $0.bytesSent += bytes.count }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).whenSuccess {
            self.exchange.count {
                $0.framesSent += 1
                $0.symbolsSent += perFrame
            }
            self.floodFrame(context: loop.value, perFrame: perFrame)
        }
    }

    private func answerCandles(context: ChannelHandlerContext, path: String) {
        switch exchange.candles {
        case .notFound:
            exchange.count { $0.candleRequests.append(path) }
            respond(context: context, status: "404 Not Found", body: "")
        case .hang(let answered):
            let market = path.components(separatedBy: "symbol=").dropFirst().first ?? ""
            if answered.contains(where: { market.hasPrefix($0) }) {
                exchange.count { $0.candleRequests.append(path) }
                respond(context: context, status: "200 OK", body: "[]")
            } else {
                holding = true
                exchange.count {
                    $0.candleRequests.append(path)
                    $0.candlesHeld += 1
                }
            }
        }
    }

    private func answerMarkets(context: ChannelHandlerContext) {
        switch exchange.markets {
        case .valid: respond(context: context, status: "200 OK", body: HostileExchange.marketList)
        case .serverError: respond(context: context, status: "500 Internal Server Error", body: "")
        case .reset: reset(context: context)
        case .notJSON: respond(context: context, status: "200 OK", body: "<html>maintenance</html>")
        case .slow:
            write(
                context: context,
                Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n".utf8))
            stream(context: context, chunk: ByteBuffer(string: " "), every: .seconds(1), remaining: 100_000)
        case .huge(let bytes):
            write(
                context: context,
                Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bytes)\r\n\r\n[".utf8))
            stream(
                context: context, chunk: ByteBuffer(repeating: 0x20, count: 1 << 16), every: .zero, remaining: bytes - 1
            )
        }
    }

    /// Writes `chunk` (cut to `remaining`) every `every`, each after the previous one is written.
    private func stream(context: ChannelHandlerContext, chunk: ByteBuffer, every: Duration, remaining: Int) {
        guard remaining > 0, context.channel.isActive else { return }
        let part = chunk.getSlice(at: chunk.readerIndex, length: min(chunk.readableBytes, remaining)) ?? chunk
        let loop = NIOLoopBound(context, eventLoop: context.eventLoop)
        exchange.count { $0.bytesSent += part.readableBytes }
        let left = remaining - part.readableBytes
        context.writeAndFlush(wrapOutboundOut(part)).whenSuccess {
            if every == .zero {
                self.stream(context: loop.value, chunk: chunk, every: every, remaining: left)
            } else {
                loop.value.eventLoop.scheduleTask(in: .nanoseconds(every.nanoseconds)) {
                    self.stream(context: loop.value, chunk: chunk, every: every, remaining: left)
                }
            }
        }
    }

    private func respond(context: ChannelHandlerContext, status: String, body: String) {
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        let loop = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in
            loop.value.close(promise: nil)
        }
    }

    private func reset(context: ChannelHandlerContext) {
        // SO_LINGER with a zero timeout: close() sends RST instead of FIN.
        guard let socket = context.channel as? any SocketOptionProvider else { return context.close(promise: nil) }
        let channel = context.channel
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func write(context: ChannelHandlerContext, _ bytes: [UInt8]) {
        exchange.count { $0.bytesSent += bytes.count }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }

    static func switching(accept: String) -> [UInt8] {
        Array(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
                .utf8)
    }

    /// RFC 6455 §4.2.2: base64 of the SHA-1 of the key and the protocol's GUID.
    static func accept(for key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// An unmasked server frame, FIN set.
    static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: payload.count >> shift))
            }
        }
        return out + payload
    }
}

extension Duration {
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
