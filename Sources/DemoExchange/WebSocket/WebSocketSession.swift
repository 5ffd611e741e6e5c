import Foundation
import HummingbirdWebSocket
import NIOCore

/// One websocket client, BTSE style: `connect success` on open; `ping` → `pong`;
/// `{"op":"subscribe","args":["coinIndex"]}` → an ack, then prices; anything else → an
/// error frame. Mistakes never close the connection; only faults and `stop()` do.
struct WebSocketSession: Sendable {
    /// Topics this exchange serves; BTSE acks only the topics it subscribed.
    static let topics: Set<String> = ["coinIndex"]

    let hub: ConnectionHub
    let feed: PriceFeed
    let stats: StatsCounter

    func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: (any Channel)? = nil
    )
        async throws
    {
        let (id, outgoing) = hub.open()
        stats.update {
            $0.connectionsAccepted += 1; $0.connectionsOpen += 1
        }
        defer {
            hub.remove(id)
            stats.update { $0.connectionsOpen -= 1 }
        }
        hub.send(.control(Frames.connected), to: id)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Writer: drains this connection's queue; ends on `.close` or when the queue ends.
            group.addTask {
                try await ConnectionWriter.drain(
                    outgoing, to: outbound, channel: channel, stats: stats,
                    prices: { message in
                        guard case .price(let text) = message else { return [] }
                        return [text]
                    })
            }
            // Reader: answers requests until the client (or the close handshake) ends the stream.
            group.addTask {
                defer { hub.remove(id) }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message else {
                        hub.send(.control(Frames.error("binary frames are not understood")), to: id)
                        continue
                    }
                    answer(text, from: id)
                }
            }
            try await group.waitForAll()
        }
    }

    private func answer(_ text: String, from id: Int) {
        if text == "ping" {
            hub.send(.control(Frames.pong), to: id)
            return
        }
        // JSONSerialization, not the feeds' own reader: FeedJSON is internal to AlertFeeds, and a
        // client's control message is one small object.
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            let op = object["op"] as? String
        else {
            hub.send(.control(Frames.error("not understood: expected ping or {\"op\":…,\"args\":[…]}")), to: id)
            return
        }
        let args = object["args"] as? [String] ?? []
        switch op {
        case "subscribe", "unsubscribe":
            let known = args.filter(Self.topics.contains)
            guard !known.isEmpty else {
                hub.send(.control(Frames.error("unknown topic(s) \(args); this exchange serves coinIndex")), to: id)
                return
            }
            hub.send(.control(Frames.ack(op, channels: known)), to: id)
            if hub.setSubscribed(id, op == "subscribe"), op == "subscribe" {
                stats.update { $0.subscriptions += 1 }
                feed.startIfNeeded()
            }
        default:
            hub.send(.control(Frames.error("unknown op \(op)")), to: id)
        }
    }
}
