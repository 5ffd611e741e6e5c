import Foundation
import HummingbirdWebSocket
import NIOCore
import NIOPosix
import NIOWebSocket
import Platform

/// What a look-alike's websocket connection does, apart from moving bytes: answer the client's
/// messages, render price updates for its subscriptions, and keep its keep-alive rules.
///
/// `VenueSession` calls these one at a time per connection, except `pong`, which arrives from
/// the channel's event loop; implementations keep their state behind a lock. Times are the
/// connection's age on the exchange's injected clock.
protocol VenueConnection: AnyObject, Sendable {
    /// Messages to send as soon as the connection is open.
    func opened(now: Int64) -> [String]
    /// Whether the connection follows markets from the start (streams named in its URL).
    var subscribedAtOpen: Bool { get }
    /// The answer to one text message from the client, received at `age`.
    func received(_ text: String, age: Duration, now: Int64) -> VenueReply
    /// This connection's frames for one price step (empty when it follows none of the markets).
    func render(_ update: BoardUpdate) -> [String]
    /// Called each keep-alive tick: heartbeats to send, pings, and whether to close now.
    func tick(age: Duration, now: Int64) -> [VenueAction]
    /// A websocket pong frame arrived at `age`, with `payload`.
    func pong(_ payload: [UInt8], age: Duration)
    /// What to send before the server shuts down (Binance's `serverShutdown`); none by default.
    func shutdownNotice(now: Int64) -> [String]
    /// A text message as it is written, in the order of writing (the text itself by default).
    func stamped(_ text: String) -> String
}

extension VenueConnection {
    var subscribedAtOpen: Bool { false }
    func pong(_ payload: [UInt8], age: Duration) {}
    func shutdownNotice(now: Int64) -> [String] { [] }
    func stamped(_ text: String) -> String { text }
}

struct VenueReply: Sendable {
    var messages: [String] = []
    /// Whether the connection follows at least one market after this message.
    var subscribed: Bool? = nil
    /// Close the connection after sending `messages`.
    var close: VenueAction? = nil
}

enum VenueAction: Sendable, Equatable {
    case send(String)
    /// A websocket ping frame with this payload.
    case ping([UInt8])
    /// A close frame with this code and reason, then the end of the connection.
    case close(code: UInt16, reason: String)
}

/// Runs one look-alike websocket connection: the writer that drains the connection's queue in
/// the hub, the reader that answers the client, and the keep-alive timer on the exchange's
/// clock, which ticks every `KeepAliveSettings.tick` and asks the connection what is due.
struct VenueSession: Sendable {
    let hub: ConnectionHub
    let feed: PriceFeed
    let stats: StatsCounter
    let clock: any Clock<Duration>
    let tick: Duration

    func run(
        _ connection: any VenueConnection, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        channel: any Channel
    ) async throws {
        let (id, outgoing) = hub.open(kind: .venue)
        stats.update {
            $0.connectionsAccepted += 1; $0.connectionsOpen += 1
        }
        defer {
            hub.remove(id)
            stats.update { $0.connectionsOpen -= 1 }
        }
        let age = clock.ageReader()
        let clock = clock
        // Pong frames never reach the handler (swift-websocket answers and swallows them), so an
        // observer behind the frame decoder reports them.
        let observer = PongObserver { payload in connection.pong(payload, age: age()) }
        try? await channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
            try pipeline.addHandler(observer, position: .after(decoder))
        }.get()
        for text in connection.opened(now: Wallclock.millis()) { hub.send(.control(text), to: id) }
        if connection.subscribedAtOpen, hub.setSubscribed(id, true) {
            stats.update { $0.subscriptions += 1 }
            feed.startIfNeeded()
        }
        let tick = tick
        // Each part says whether its end is the connection's end: the writer's and the reader's
        // are; the timer's (after asking to close) is not, so the close frame still goes out.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await ConnectionWriter.drain(
                    outgoing, to: outbound, channel: channel, stats: stats,
                    prices: { message in
                        guard case .update(let update) = message else { return [] }
                        return connection.render(update)
                    },
                    notice: { connection.shutdownNotice(now: Wallclock.millis()) },
                    stamp: { connection.stamped($0) })
                return true
            }
            group.addTask {
                defer { hub.remove(id) }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message else { continue }
                    // Read inside the hub's lock, so a snapshot is stamped no earlier than the
                    // steps already broadcast.
                    let (reply, newlySubscribed) = hub.answer(id) {
                        connection.received(text, age: age(), now: Wallclock.millis())
                    }
                    if newlySubscribed {
                        stats.update { $0.subscriptions += 1 }
                        feed.startIfNeeded()
                    }
                    if let close = reply.close { Self.perform(close, on: id, hub: hub) }
                }
                return true
            }
            group.addTask {
                while !Task.isCancelled {
                    try await clock.sleep(for: tick)
                    var closing = false
                    for action in connection.tick(age: age(), now: Wallclock.millis()) {
                        Self.perform(action, on: id, hub: hub)
                        if case .close = action { closing = true }
                    }
                    if closing { return false }
                }
                return false
            }
            // The connection ends when the reader or the writer does; the timer then stops.
            while let ended = try await group.next(), !ended {}
            group.cancelAll()
        }
    }

    private static func perform(_ action: VenueAction, on id: Int, hub: ConnectionHub) {
        switch action {
        case .send(let text): hub.send(.control(text), to: id)
        case .ping(let payload): hub.send(.ping(payload), to: id)
        case .close(let code, let reason): hub.send(.closeWith(code: code, reason: reason), to: id)
        }
    }
}

extension Clock where Duration == Swift.Duration {
    /// The time passed on this clock since now, read when called.
    func ageReader() -> @Sendable () -> Swift.Duration {
        let start = now
        return { start.duration(to: self.now) }
    }
}

/// Passes every websocket frame on and reports the pong frames' payloads.
final class PongObserver: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    private let onPong: @Sendable ([UInt8]) -> Void

    init(onPong: @escaping @Sendable ([UInt8]) -> Void) {
        self.onPong = onPong
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.opcode == .pong {
            var payload = frame.unmaskedData
            onPong(payload.readBytes(length: payload.readableBytes) ?? [])
        }
        context.fireChannelRead(data)
    }
}

/// A limit on the messages a client sends (Binance: 5 a second on a connection; Coinbase: 8 a
/// second): the messages within the last second of the exchange's clock, counted per connection.
struct MessageRate: Sendable {
    let limit: Int
    private var times: [Duration] = []
    /// Whether a message took the connection over `limit` (it is then closed).
    private(set) var exceeded = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a message received at `age` (the connection's age); false once more than `limit`
    /// came within one second.
    mutating func admit(at age: Duration) -> Bool {
        times.removeAll { age - $0 >= .seconds(1) }
        times.append(age)
        if times.count > limit { exceeded = true }
        return !exceeded
    }

    /// The close for a connection that went over the limit.
    var close: VenueAction {
        .close(code: 1008, reason: "too many messages: more than \(limit) in a second")
    }
}
