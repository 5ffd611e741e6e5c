import DemoExchange
import Foundation
import Testing

@Suite("coinIndex websocket")
struct WebSocketTests {
    @Test("connect success, subscribe ack, then coinIndex frames with BTC_1")
    func subscribe() async throws {
        try await withExchange(walk()) { server, port in
            let frames = try await withClient(port: port) { messages, outbound in
                #expect(try await messages.next() == "connect success")
                try await outbound.write(.text(subscribeCoinIndex))
                #expect(try await messages.next() == #"{"event":"subscribe","channel":["coinIndex"]}"#)
                var frames: [String] = []
                while frames.count < 2, let text = try await messages.next() { frames.append(text) }
                return frames
            }
            #expect(frames.count == 2)
            for frame in frames {
                let data = try #require(coinIndexData(frame))
                let btc = try #require(data["BTC_1"])
                #expect(btc["id"] as? String == "BTC")
                #expect(btc["type"] as? Int == 1)
                #expect((btc["price"] as? Double ?? 0) > 0)
                #expect(data.count == 156)
            }
            let stats = server.stats
            #expect(stats.connectionsAccepted == 1)
            #expect(stats.subscriptions == 1)
            #expect(stats.framesSent >= 2)
        }
    }

    @Test("ping gets pong; unknown ops and topics get error frames, not a disconnect (also on /ws/spot)")
    func pingAndErrors() async throws {
        try await withExchange(walk()) { _, port in
            let replies = try await withClient(port: port, path: "/ws/spot") { messages, outbound in
                _ = try await messages.next()
                var replies: [String] = []
                for request in [
                    "ping", #"{"op":"login","args":[]}"#, #"{"op":"subscribe","args":["orderBook"]}"#,
                    "hello", "ping"
                ] {
                    try await outbound.write(.text(request))
                    replies.append(try await messages.next() ?? "(closed)")
                }
                return replies
            }
            #expect(replies[0] == "pong")
            for reply in replies[1...3] {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
                #expect(object["event"] as? String == "error")
                #expect(object["message"] is String)
            }
            #expect(replies[4] == "pong")
        }
    }

    /// The first `count` coinIndex frames a fresh server with `seed` sends its only client.
    func firstFrames(seed: UInt64, count: Int) async throws -> [String] {
        try await withExchange(walk(seed: seed, interval: .milliseconds(50))) { _, port in
            try await withClient(port: port) { messages, outbound in
                try await outbound.write(.text(subscribeCoinIndex))
                var frames: [String] = []
                while frames.count < count, let text = try await messages.next(where: isCoinIndex) {
                    frames.append(text)
                }
                return frames
            }
        }
    }

    @Test("the same seed gives the same first frames; another seed does not")
    func deterministic() async throws {
        let a = try await firstFrames(seed: 42, count: 3)
        let b = try await firstFrames(seed: 42, count: 3)
        let c = try await firstFrames(seed: 43, count: 3)
        #expect(a.count == 3)
        #expect(a == b)
        #expect(a != c)
        #expect(a[0] != a[1])
    }

    @Test("several clients at once each get frames")
    func severalClients() async throws {
        try await withExchange(walk()) { server, port in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await withClient(port: port) { messages, outbound in
                            try await outbound.write(.text(subscribeCoinIndex))
                            var count = 0
                            while count < 3, try await messages.next(where: isCoinIndex) != nil { count += 1 }
                            return count
                        }
                    }
                }
                for try await count in group { #expect(count == 3) }
            }
            #expect(server.stats.connectionsAccepted == 3)
            #expect(server.stats.subscriptions == 3)
        }
    }
}
