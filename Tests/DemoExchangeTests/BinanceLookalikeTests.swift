import AlertTestSupport
import DemoExchange
import Foundation
import Testing

@Suite("Binance look-alike")
struct BinanceLookalikeTests {
    @Test("exchangeInfo, ticker/24hr and klines have the documented shapes, at both paths")
    func rest() async throws {
        try await withExchange(walk()) { _, port in
            for prefix in ["", "/binance"] {
                let info = try await get(port, prefix + "/api/v3/exchangeInfo")
                #expect(info.status == 200)
                let infoJSON = try JSONSerialization.jsonObject(with: info.body)
                try expectShape(of: "binance_exchangeInfo.json", infoJSON)
                let symbols = (infoJSON as? [String: Any])?["symbols"] as? [[String: Any]] ?? []
                #expect(
                    symbols.contains { $0["symbol"] as? String == "BTCUSDT" && $0["baseAsset"] as? String == "BTC" })
                let klines = try await get(port, prefix + "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=5")
                let rows = try JSONSerialization.jsonObject(with: klines.body)
                try expectShape(of: "binance_klines.json", rows)
                #expect((rows as? [Any])?.count == 5)
            }
            let ticker = try await get(port, "/api/v3/ticker/24hr?symbol=ETHUSDT")
            let object = try #require(try JSONSerialization.jsonObject(with: ticker.body) as? [String: Any])
            #expect(object["symbol"] as? String == "ETHUSDT")
            #expect(Double(object["lastPrice"] as? String ?? "") != nil)
            #expect(Double(object["priceChangePercent"] as? String ?? "") != nil)
        }
    }

    @Test("klines serve at most 1000 per request and refuse a larger limit; unknown symbols are refused")
    func klineLimits() async throws {
        try await withExchange(walk()) { _, port in
            let full = try await get(port, "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=1000")
            #expect((try JSONSerialization.jsonObject(with: full.body) as? [Any])?.count == 1000)
            let over = try await get(port, "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=1001")
            #expect(over.status == 400)
            #expect(String(decoding: over.body, as: UTF8.self).contains("-1130"))
            let unknown = try await get(port, "/api/v3/ticker/24hr?symbol=NOPEUSDT")
            #expect(unknown.status == 400)
            #expect(String(decoding: unknown.body, as: UTF8.self) == #"{"code":-1121,"msg":"Invalid symbol."}"#)
        }
    }

    @Test("SUBSCRIBE is acknowledged and 24hrTicker events in the documented shape follow, raw and combined")
    func ticks() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws", answerPings: true) { socket in
                try await socket.send(#"{"method":"SUBSCRIBE","params":["btcusdt@ticker"],"id":1}"#)
                #expect(try await socket.nextText() == #"{"result":null,"id":1}"#)
                let event = try #require(try await socket.nextText())
                try expectShape(of: "binance_24hrTicker.jsonc", try parse(event))
                #expect((try parse(event) as? [String: Any])?["s"] as? String == "BTCUSDT")
            }
            try await RawWebSocket.connect(port: port, path: "/stream?streams=ethusdt@miniTicker", answerPings: true) {
                socket in
                let wrapped = try object(try await socket.nextText())
                #expect(wrapped["stream"] as? String == "ethusdt@miniTicker")
                try expectShape(of: "binance_miniTicker.jsonc", wrapped["data"] as Any)
            }
        }
    }

    @Test("unknown streams are refused with Binance's error shape; LIST_SUBSCRIPTIONS lists the streams followed")
    func refusals() async throws {
        try await withExchange(walk()) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws", answerPings: true) { socket in
                try await socket.send(#"{"method":"SUBSCRIBE","params":["nopeusdt@ticker"],"id":7}"#)
                let error = try object(try await socket.nextText())
                #expect(error["id"] as? Int == 7)
                #expect((error["error"] as? [String: Any])?["code"] as? Int == 2)
                let info = try await get(port, "/api/v3/exchangeInfo")
                let symbols =
                    ((try JSONSerialization.jsonObject(with: info.body) as? [String: Any])?["symbols"]
                    as? [[String: Any]] ?? []).compactMap { ($0["symbol"] as? String)?.lowercased() }
                let streams = symbols.flatMap { ["\($0)@ticker", "\($0)@miniTicker"] }
                #expect(streams.count >= 150)
                let first = Array(streams.prefix(150))
                let list = first.map { "\"\($0)\"" }.joined(separator: ",")
                try await socket.send(#"{"method":"SUBSCRIBE","params":[\#(list)],"id":8}"#)
                #expect(try await socket.nextText(where: { $0.contains(#""id":8"#) }) == #"{"result":null,"id":8}"#)
                try await socket.send(#"{"method":"LIST_SUBSCRIPTIONS","id":9}"#)
                let listed = try #require(try await socket.nextText(where: { $0.contains(#""id":9"#) }))
                #expect(((try parse(listed) as? [String: Any])?["result"] as? [String])?.count == 150)
            }
        }
    }

    @Test("a connection that does not answer pings is closed a minute after the first unanswered one")
    func noPong() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws/btcusdt@ticker") { socket in
                try await advance(clock, to: .seconds(79), sleepers: 2)
                try await advance(clock, to: .seconds(80), sleepers: 2)
                var pings = 0
                while true {
                    let event = try await socket.next()
                    if case .ping = event { pings += 1; continue }
                    guard case .close(let code, _) = event else {
                        Issue.record("expected a close frame, got \(event)")
                        return
                    }
                    #expect(code == 1008)
                    break
                }
                #expect(clock.now.offset == .seconds(80))
                #expect(pings == 3)
            }
        }
    }

    @Test("a connection that answers every ping stays open")
    func pongs() async throws {
        let clock = ManualClock()
        try await withExchange(quietExchange(clock: clock)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws/btcusdt@ticker", answerPings: true) { socket in
                for k in 1...10 {
                    try await advance(clock, to: .seconds(20 * k), sleepers: 2)
                    guard case .ping = try await socket.next() else {
                        Issue.record("expected a ping at \(20 * k) s")
                        return
                    }
                    // The reply to a later message proves the server read the pong before it.
                    try await socket.send(#"{"method":"LIST_SUBSCRIPTIONS","id":\#(k)}"#)
                    _ = try await socket.nextText()
                }
                try await advance(clock, to: .seconds(201), sleepers: 2)
            }
        }
    }

    @Test("serverShutdown comes before the connection's lifetime ends, then the connection is closed")
    func lifetime() async throws {
        let clock = ManualClock()
        let keepAlive = KeepAliveSettings(
            binancePingEvery: .seconds(1_000), binanceLifetime: .seconds(100), binanceShutdownNotice: .seconds(10))
        try await withExchange(quietExchange(clock: clock, keepAlive: keepAlive)) { _, port in
            try await RawWebSocket.connect(port: port, path: "/ws") { socket in
                try await advance(clock, to: .seconds(90), sleepers: 2)
                let notice = try #require(try await socket.nextText())
                #expect((try parse(notice) as? [String: Any])?["e"] as? String == "serverShutdown")
                #expect(clock.now.offset == .seconds(90))
                try await advance(clock, to: .seconds(99), sleepers: 2)
                try await advance(clock, to: .seconds(100), sleepers: 2)
                #expect(try await socket.next() == .close(code: 1001, reason: "connection lifetime reached"))
            }
        }
    }
}

extension RawWebSocket {
    /// The next text message that `match` accepts; nil when the connection ended first.
    mutating func nextText(where match: (String) -> Bool) async throws -> String? {
        while let text = try await nextText() {
            if match(text) { return text }
        }
        return nil
    }
}
